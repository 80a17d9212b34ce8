// What every doctor check returns, and what the checks share: the configuration and the facts one
// check finds that a later one needs (newest record times for the clock check, the collector's Date).
import type { Config } from '../config.js';

export type CheckStatus = 'ok' | 'warn' | 'fail';

export interface CheckResult {
  /** Stable name, e.g. `hooks`; the JSON report is keyed by it. */
  check: string;
  status: CheckStatus;
  message: string;
  /** What to do about it; empty when nothing needs doing. */
  fix: string;
}

export interface DoctorFacts {
  /** Newest `timestamp` of a transcript record, and newest transcript file mtime (epoch ms). */
  newestTranscriptRecordMs?: number;
  newestTranscriptMtimeMs?: number;
  /** Firing time of the newest hook event in the spool. */
  newestSpoolEventMs?: number;
  /** The collector's Date header and when it was received. */
  collectorDate?: { dateMs: number; receivedMs: number };
}

export interface DoctorContext {
  env: Record<string, string | undefined>;
  config: Config;
  now: () => number;
  /** The collector's health_check extension (e.g. http://gw:13133/), when known. */
  collectorHealthUrl?: string;
  timeoutMs: number;
  facts: DoctorFacts;
}

export type Check = (context: DoctorContext) => Promise<CheckResult>;

export function result(check: string, status: CheckStatus, message: string, fix = ''): CheckResult {
  return { check, status, message, fix };
}

/** A duration for people: 45 s, 12 min, 3.5 h, 2.0 d. */
export function age(ms: number): string {
  const seconds = Math.round(ms / 1000);
  if (Math.abs(seconds) < 120) return `${seconds} s`;
  if (Math.abs(seconds) < 7200) return `${Math.round(seconds / 60)} min`;
  if (Math.abs(seconds) < 172_800) return `${(seconds / 3600).toFixed(1)} h`;
  return `${(seconds / 86_400).toFixed(1)} d`;
}
