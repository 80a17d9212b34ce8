// One typed configuration with its defaults: built from (lowest to highest) defaults, the YAML config
// file, environment variables, and command-line flags. Every key is documented in README.md.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse as parseYaml } from 'yaml';
import type { ContentLevel } from './model.js';
import { statePaths, type StatePaths } from './paths.js';

export interface Config {
  /** Embedded store directory or ClickHouse server URL; '' disables the store (OTLP only). */
  store: string;
  /** OTLP/HTTP endpoint of a collector; '' disables OTLP export. */
  otlpEndpoint: string;
  contentLevel: ContentLevel;
  /** Characters kept per content field (DESIGN section 7). */
  contentMaxLength: number;
  /** A session with no event for this long has its open turn closed (live mode). */
  idleMs: number;
  /** How often the process table is read for the failure-mode detectors (besides the scans events ask for). */
  scanIntervalMs: number;
  /** Days raw rows are kept in the store (TTL). */
  rawTtlDays: number;
  /** Days the summaries are kept after a session's last activity; 0 (the default) keeps all history. */
  summaryTtlDays: number;
  /** How long the oldest item read waits before it is delivered (`run`), unless a full batch goes first. */
  flushIntervalMs: number;
  paths: StatePaths;
}

type Env = Record<string, string | undefined>;

export const DEFAULTS = {
  contentLevel: 'masked' as ContentLevel,
  contentMaxLength: 4096,
  idleMs: 30 * 60_000,
  scanIntervalMs: 15_000,
  rawTtlDays: 30,
  summaryTtlDays: 0,
  /** With a store: an append is queryable within a second (the Collector's batch timeout). */
  flushIntervalMs: 200,
  /**
   * OTLP only: the OTel SDKs' batch delay. A busy agent's requests hold twice the events (4, not 2; at 40 lines/s
   * 16 times), and a gateway core takes 1.23x the events (2.4-2.9x at 40 lines/s; docs/OPERATIONS.md).
   */
  otlpOnlyFlushIntervalMs: 5_000,
};

export class ConfigError extends Error {
  override name = 'ConfigError';
}

export function configFilePath(env: Env = process.env): string {
  return env.CCOTEL_CONFIG ?? join(env.XDG_CONFIG_HOME || join(env.HOME ?? '', '.config'), 'ccotel', 'config.yaml');
}

function readConfigFile(path: string): Record<string, unknown> {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch {
    return {}; // no config file: defaults
  }
  const parsed: unknown = parseYaml(text);
  if (parsed === null || parsed === undefined) return {};
  if (typeof parsed !== 'object' || Array.isArray(parsed)) throw new ConfigError(`${path}: expected a mapping of keys`);
  return parsed as Record<string, unknown>;
}

export interface ConfigOverrides {
  store?: string;
  otlp?: string;
  contentLevel?: string;
  contentMaxLength?: number;
  idleMs?: number;
  scanIntervalMs?: number;
}

export function loadConfig(overrides: ConfigOverrides = {}, env: Env = process.env): Config {
  const paths = statePaths(env);
  const file = readConfigFile(configFilePath(env));
  const pick = (flag: unknown, envValue: string | undefined, fileValue: unknown) => flag ?? envValue ?? fileValue;
  const store = storeTarget(String(pick(overrides.store, env.CCOTEL_STORE, file.store) ?? paths.storeDir));
  const config: Config = {
    store,
    otlpEndpoint: String(
      pick(overrides.otlp, env.OTEL_EXPORTER_OTLP_ENDPOINT ?? env.CCOTEL_OTLP_ENDPOINT, file.otlp_endpoint) ?? '',
    ),
    contentLevel: String(pick(overrides.contentLevel, env.CCOTEL_CONTENT_LEVEL, file.content_level) ?? DEFAULTS.contentLevel) as ContentLevel,
    contentMaxLength: Number(pick(overrides.contentMaxLength, env.CCOTEL_CONTENT_MAX_LENGTH, file.content_max_length) ?? DEFAULTS.contentMaxLength),
    idleMs: Number(pick(overrides.idleMs, env.CCOTEL_IDLE_MS, file.idle_ms) ?? DEFAULTS.idleMs),
    scanIntervalMs: Number(pick(overrides.scanIntervalMs, env.CCOTEL_SCAN_INTERVAL_MS, file.scan_interval_ms) ?? DEFAULTS.scanIntervalMs),
    rawTtlDays: Number(pick(undefined, env.CCOTEL_RAW_TTL_DAYS, file.raw_ttl_days) ?? DEFAULTS.rawTtlDays),
    summaryTtlDays: Number(pick(undefined, env.CCOTEL_SUMMARY_TTL_DAYS, file.summary_ttl_days) ?? DEFAULTS.summaryTtlDays),
    flushIntervalMs: Number(
      pick(undefined, env.CCOTEL_FLUSH_INTERVAL_MS, file.flush_interval_ms) ?? (store === '' ? DEFAULTS.otlpOnlyFlushIntervalMs : DEFAULTS.flushIntervalMs),
    ),
    paths,
  };
  validate(config, env);
  return config;
}

/** `none` (or empty) means no store: OTLP only, and chdb is never loaded. */
function storeTarget(value: string): string {
  return value === 'none' ? '' : value;
}

function validate(config: Config, env: Env): void {
  if (config.contentLevel !== 'none' && config.contentLevel !== 'masked' && config.contentLevel !== 'raw') {
    throw new ConfigError(`content level must be "none" or "masked", not "${config.contentLevel}"`);
  }
  if (config.contentLevel === 'raw' && env.CCOTEL_ALLOW_RAW_CONTENT !== '1') {
    throw new ConfigError('content level "raw" sends secrets unmasked: it needs the explicit opt-in CCOTEL_ALLOW_RAW_CONTENT=1');
  }
  for (const [key, value] of [
    ['content max length', config.contentMaxLength],
    ['idle time', config.idleMs],
    ['raw TTL days', config.rawTtlDays],
    ['summary TTL days', config.summaryTtlDays],
  ] as const) {
    if (!Number.isInteger(value) || value < 0) throw new ConfigError(`${key} must be a whole number ≥ 0, not ${value}`);
  }
  if (!Number.isInteger(config.scanIntervalMs) || config.scanIntervalMs < 100) throw new ConfigError(`scan interval must be a whole number of ms ≥ 100, not ${config.scanIntervalMs}`);
  if (!Number.isInteger(config.flushIntervalMs) || config.flushIntervalMs < 10 || config.flushIntervalMs > 60_000) {
    throw new ConfigError(`flush interval must be a whole number of ms from 10 to 60000, not ${config.flushIntervalMs}`);
  }
  if (config.contentMaxLength < 64) throw new ConfigError('content max length must be at least 64 characters');
}
