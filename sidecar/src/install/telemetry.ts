// `install-telemetry` / `uninstall-telemetry`: Claude Code's own telemetry pointed at `ccotel run`'s receiver
// through the `env` block of settings.json, edited like install-hooks does (settings-file.ts: only what changes is
// rewritten, a backup first). What install wrote, and what each key held before, is remembered in the state dir,
// so uninstall takes back exactly that: a key the user set before is given back its value, one they changed since
// is left to them, and keys install did not write are never touched.
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { statePaths } from '../paths.js';
import { ensureStateDir } from '../secure-dir.js';
import { homeOf, type InstallOptions, type InstallReport } from './options.js';
import { planSettingsChange, settingsPathFor, type Settings } from './settings-file.js';

export type TelemetryProtocol = 'http/protobuf' | 'http/json';

export interface TelemetryInstallOptions extends InstallOptions {
  /** The receiver's port (native_telemetry_port). */
  port: number;
  protocol?: TelemetryProtocol;
  /** Claude Code's beta traces too (claude_code.interaction → llm_request / tool spans). */
  traces?: boolean;
  /** Content gates, off unless asked: prompts (OTEL_LOG_USER_PROMPTS) and tool inputs (OTEL_LOG_TOOL_DETAILS). */
  logPrompts?: boolean;
  logToolDetails?: boolean;
  /** Replace settings that send the telemetry elsewhere (another endpoint, protocol or exporter). */
  replace?: boolean;
}

/** The variables install writes, for the options given. */
export function telemetryEnv(options: Pick<TelemetryInstallOptions, 'port' | 'protocol' | 'traces' | 'logPrompts' | 'logToolDetails'>): Record<string, string> {
  return {
    CLAUDE_CODE_ENABLE_TELEMETRY: '1',
    OTEL_METRICS_EXPORTER: 'otlp',
    OTEL_LOGS_EXPORTER: 'otlp',
    ...(options.traces ? { OTEL_TRACES_EXPORTER: 'otlp', CLAUDE_CODE_ENHANCED_TELEMETRY_BETA: '1' } : {}),
    OTEL_EXPORTER_OTLP_PROTOCOL: options.protocol ?? 'http/protobuf',
    OTEL_EXPORTER_OTLP_ENDPOINT: receiverUrl(options.port),
    ...(options.logPrompts ? { OTEL_LOG_USER_PROMPTS: '1' } : {}),
    ...(options.logToolDetails ? { OTEL_LOG_TOOL_DETAILS: '1' } : {}),
  };
}

export function receiverUrl(port: number): string {
  return `http://127.0.0.1:${port}`;
}

/** Set elsewhere, these send a signal somewhere else than the endpoint install writes. */
const OVERRIDING = ['OTEL_EXPORTER_OTLP_METRICS_ENDPOINT', 'OTEL_EXPORTER_OTLP_LOGS_ENDPOINT', 'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT',
  'OTEL_EXPORTER_OTLP_METRICS_PROTOCOL', 'OTEL_EXPORTER_OTLP_LOGS_PROTOCOL', 'OTEL_EXPORTER_OTLP_TRACES_PROTOCOL'];

/** Per settings file: each key install wrote, its value then, and what it held before (null: nothing). */
type Written = Record<string, Record<string, { wrote: string; previous: string | null }>>;

function writtenPath(env: InstallOptions['env']): string {
  return join(statePaths(env).stateDir, 'telemetry-settings.json');
}

function readWritten(env: InstallOptions['env']): Written {
  try {
    return JSON.parse(readFileSync(writtenPath(env), 'utf8')) as Written;
  } catch {
    return {};
  }
}

function saveWritten(env: InstallOptions['env'], written: Written): void {
  ensureStateDir(statePaths(env), 'stateDir');
  writeFileSync(writtenPath(env), `${JSON.stringify(written, null, 2)}\n`, { mode: 0o600 });
}

const envOf = (settings: Settings): Record<string, unknown> =>
  typeof settings.env === 'object' && settings.env !== null && !Array.isArray(settings.env) ? (settings.env as Record<string, unknown>) : {};

function withEnv(settings: Settings, env: Record<string, unknown>): Settings {
  const next = { ...settings };
  if (Object.keys(env).length === 0) delete next.env;
  else next.env = env;
  return next;
}

export function installTelemetry(options: TelemetryInstallOptions): InstallReport {
  const path = settingsPathFor(homeOf(options.env), options.projectDir);
  const wanted = telemetryEnv(options);
  const warnings: string[] = [];
  const remembered = readWritten(options.env);
  const mine = { ...remembered[path] };
  const change = planSettingsChange(path, (settings) => {
    const env = { ...envOf(settings) };
    for (const [key, value] of Object.entries(wanted)) {
      const current = env[key] === undefined ? null : String(env[key]);
      if (current === value) continue;
      // A value of the user's that sends the telemetry elsewhere stays unless asked; one ccotel wrote is its own.
      if (current !== null && mine[key]?.wrote !== current && !options.replace && !key.startsWith('OTEL_LOG_') && key !== 'CLAUDE_CODE_ENABLE_TELEMETRY') {
        warnings.push(`${path}: env.${key} is ${JSON.stringify(current)}; left as it is (--replace points it at ccotel; uninstall-telemetry gives it back)`);
        continue;
      }
      mine[key] = { wrote: value, previous: key in mine ? mine[key].previous : current };
      env[key] = value;
    }
    for (const key of OVERRIDING) {
      if (env[key] !== undefined) warnings.push(`${path}: env.${key} is set and overrides the endpoint or protocol for its signal`);
    }
    for (const key of ['OTEL_LOG_USER_PROMPTS', 'OTEL_LOG_TOOL_DETAILS', 'OTEL_LOG_TOOL_CONTENT', 'OTEL_LOG_RAW_API_BODIES']) {
      if (env[key] !== undefined && wanted[key] === undefined && env[key] !== '0') warnings.push(`${path}: env.${key} is on (set by you): that content is exported too, masked by ccotel`);
    }
    return withEnv(settings, env);
  });
  if (options.dryRun) return { change, warnings };
  const backupPath = change.apply(options.now);
  saveWritten(options.env, { ...remembered, [path]: mine });
  return { change, backupPath, warnings };
}

export function uninstallTelemetry(options: InstallOptions): InstallReport {
  const path = settingsPathFor(homeOf(options.env), options.projectDir);
  const remembered = readWritten(options.env);
  const mine = remembered[path] ?? {};
  const warnings: string[] = [];
  const change = planSettingsChange(path, (settings) => {
    const env = { ...envOf(settings) };
    for (const [key, { wrote, previous }] of Object.entries(mine)) {
      if (env[key] === undefined) continue;
      if (String(env[key]) !== wrote) {
        warnings.push(`${path}: env.${key} was changed since install-telemetry wrote it; left as it is`);
        continue;
      }
      if (previous === null) delete env[key];
      else env[key] = previous;
    }
    return withEnv(settings, env);
  });
  if (options.dryRun) return { change, warnings };
  const backupPath = change.apply(options.now);
  const rest = { ...remembered };
  delete rest[path];
  saveWritten(options.env, rest);
  return { change, backupPath, warnings };
}
