// Runs every check in an order where each finds the facts the later ones need (transcripts and hooks
// before the clock, the collector before the clock), and says whether anything is wrong.
import { loadConfig, type ConfigOverrides } from '../config.js';
import type { Check, CheckResult, DoctorContext } from './check.js';
import { clockCheck } from './clock.js';
import { codexCheck } from './codex.js';
import { collectorCheck } from './collector.js';
import { diskCheck } from './disk.js';
import { hooksCheck } from './hooks.js';
import { permissionsCheck } from './permissions.js';
import { shellCheck } from './shell.js';
import { storeCheck } from './store.js';
import { telemetryCheck } from './telemetry.js';
import { transcriptsCheck } from './transcripts.js';

const CHECKS: Check[] = [transcriptsCheck, codexCheck, hooksCheck, shellCheck, storeCheck, telemetryCheck, collectorCheck, clockCheck, diskCheck, permissionsCheck];

export interface DoctorOptions extends Pick<ConfigOverrides, 'store' | 'otlp'> {
  env: Record<string, string | undefined>;
  collectorHealthUrl?: string;
  timeoutMs?: number;
  now?: () => number;
}

export interface DoctorReport {
  /** False when any check failed. */
  healthy: boolean;
  checks: CheckResult[];
}

export async function runDoctor(options: DoctorOptions): Promise<DoctorReport> {
  const context: DoctorContext = {
    env: options.env,
    config: loadConfig({ store: options.store, otlp: options.otlp }, options.env),
    now: options.now ?? Date.now,
    collectorHealthUrl: options.collectorHealthUrl,
    timeoutMs: options.timeoutMs ?? 5000,
    facts: {},
  };
  const checks: CheckResult[] = [];
  for (const check of CHECKS) {
    try {
      checks.push(await check(context));
    } catch (error) {
      // a check that breaks is itself a finding, and must not hide the others
      checks.push({ check: check.name.replace(/Check$/, ''), status: 'fail', message: `the check itself failed: ${(error as Error).message}`, fix: 'report this as a ccotel bug' });
    }
  }
  return { healthy: checks.every((check) => check.status !== 'fail'), checks };
}

const MARK = { ok: 'ok  ', warn: 'WARN', fail: 'FAIL' } as const;

export function formatDoctorReport(report: DoctorReport): string {
  const lines = report.checks.flatMap((check) => [
    `${MARK[check.status]} ${check.check.padEnd(11)} ${check.message}`,
    ...(check.fix ? [`     ${''.padEnd(11)} fix: ${check.fix}`] : []),
  ]);
  const failed = report.checks.filter((check) => check.status === 'fail').length;
  const warned = report.checks.filter((check) => check.status === 'warn').length;
  lines.push(failed === 0 ? `all good${warned ? ` (${warned} warnings)` : ''}` : `${failed} problem${failed === 1 ? '' : 's'}${warned ? `, ${warned} warnings` : ''}`);
  return `${lines.join('\n')}\n`;
}
