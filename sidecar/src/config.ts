// One typed configuration with its defaults: built from (lowest to highest) defaults, the YAML config
// file, environment variables, and command-line flags. Every key is documented in README.md.
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import type { ContentLevel } from './model.js';
import { statePaths, type StatePaths } from './paths.js';
import { SLOW_TOOL_FLOOR_MS, type InsightThresholds } from './report/insight-types.js';

export type { InsightThresholds } from './report/insight-types.js';

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
  /** Where Claude Code's managed policy settings are (managed-settings.json, managed-settings.d/). */
  managedSettingsDir: string;
  /** Finds a session's ticket in its branch (`ccotel.ticket`: the first group, else the match); none: no tickets. */
  ticketPattern?: RegExp;
  /** Loopback port `run` receives the agent's own OTLP on (install-telemetry points Claude Code at it); 0: none. */
  nativeTelemetryPort: number;
  /** HOST:PORT the receiver listens on instead of 127.0.0.1:nativeTelemetryPort ('' for that): a team's receiver. */
  receiverListen: string;
  /** A file holding the receiver's token (owner-only); '' for none (CCOTEL_RECEIVER_TOKEN may give it instead). */
  receiverTokenFile: string;
  /** Codex's home: its rollouts are read from `sessions/` under it. */
  codexHome: string;
  /** What `report insights` counts as a pattern (docs/REPORT.md "Insights"). */
  insights: InsightThresholds;
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
  /** Claude Code's managed settings on Linux. */
  managedSettingsDir: '/etc/claude-code',
  /** Not OTLP's 4318, which a local Collector holds. */
  nativeTelemetryPort: 14318,
  insights: { retryMin: 3, permissionAsksMin: 3, compactionsMin: 2, slowToolMs: 30_000, cacheReadMinPercent: 50 } as InsightThresholds,
};

/** The config file key and environment variable of each insight threshold. */
export const INSIGHT_KEYS: Record<keyof InsightThresholds, string> = {
  retryMin: 'insight_retry_min',
  permissionAsksMin: 'insight_permission_asks_min',
  compactionsMin: 'insight_compactions_min',
  slowToolMs: 'insight_slow_tool_ms',
  cacheReadMinPercent: 'insight_cache_read_min_percent',
};

// The YAML parser (72 modules) and the spelling suggester are loaded only when a config file is there to read: most
// commands find none, and a `report` through a running sidecar is mostly its start-up (bench/report.ts).
const require = createRequire(import.meta.url);
const parseYaml = (text: string): unknown => (require('yaml') as typeof import('yaml')).parse(text);
const closest = (word: string, words: string[]): string => (require('fastest-levenshtein') as typeof import('fastest-levenshtein')).closest(word, words);

export class ConfigError extends Error {
  override name = 'ConfigError';
}

export function configFilePath(env: Env = process.env): string {
  return env.CCOTEL_CONFIG ?? join(env.XDG_CONFIG_HOME || join(env.HOME ?? '', '.config'), 'ccotel', 'config.yaml');
}

function readConfigFile(path: string, named: boolean): Record<string, unknown> {
  if (path === 'none') return {}; // CCOTEL_CONFIG=none: defaults, whatever file there is
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    // The default file is optional; one named by CCOTEL_CONFIG is meant to be there.
    if (!named && (error as NodeJS.ErrnoException).code === 'ENOENT') return {};
    throw new ConfigError(`config file ${path} cannot be read (${(error as NodeJS.ErrnoException).code ?? (error as Error).message})${named ? ': CCOTEL_CONFIG names it' : ''}`);
  }
  let parsed: unknown;
  try {
    parsed = parseYaml(text);
  } catch (error) {
    throw new ConfigError(`${path} is not YAML: ${(error as Error).message.split('\n', 1)[0]}`);
  }
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
  ticketPattern?: string;
  nativeTelemetryPort?: number;
  receiverListen?: string;
  receiverTokenFile?: string;
  codexHome?: string;
}

export function loadConfig(overrides: ConfigOverrides = {}, env: Env = process.env): Config {
  const paths = statePaths(env);
  const path = configFilePath(env);
  const file = readConfigFile(path, env.CCOTEL_CONFIG !== undefined);
  // Each setting from the flag, the environment or the file, checked by the same code whichever gave it; an
  // error names where the value came from and the value as given. The file's keys are those asked for here.
  const fileKeys: string[] = [];
  const pick = (flag: { name: string; value: unknown }, envName: string | undefined, fileKey: string) => {
    fileKeys.push(fileKey);
    if (flag.value !== undefined) return { value: flag.value, from: flag.name };
    if (envName !== undefined && env[envName] !== undefined) return { value: env[envName], from: envName };
    if (file[fileKey] !== undefined) return { value: file[fileKey], from: `${fileKey} in ${path}` };
    return undefined;
  };
  const text = (setting: ReturnType<typeof pick>, fallback: string) => (setting === undefined ? fallback : String(setting.value));
  const whole = (setting: ReturnType<typeof pick>, fallback: number, min: number, max = Number.MAX_SAFE_INTEGER, unit = '') => {
    if (setting === undefined) return fallback;
    const value = typeof setting.value === 'number' ? setting.value : Number(String(setting.value).trim() || NaN);
    if (!Number.isInteger(value) || value < min || value > max) {
      const range = max === Number.MAX_SAFE_INTEGER ? `≥ ${min}` : `from ${min} to ${max}`;
      throw new ConfigError(`${setting.from} must be a whole number${unit} ${range}, not ${JSON.stringify(setting.value)}`);
    }
    return value;
  };
  const store = storeTarget(text(pick({ name: '--store', value: overrides.store }, 'CCOTEL_STORE', 'store'), paths.storeDir));
  const otlpEnv = env.OTEL_EXPORTER_OTLP_ENDPOINT !== undefined ? 'OTEL_EXPORTER_OTLP_ENDPOINT' : 'CCOTEL_OTLP_ENDPOINT';
  const contentLevel = pick({ name: '--content-level', value: overrides.contentLevel }, 'CCOTEL_CONTENT_LEVEL', 'content_level');
  const config: Config = {
    store,
    otlpEndpoint: text(pick({ name: '--otlp', value: overrides.otlp }, otlpEnv, 'otlp_endpoint'), ''),
    contentLevel: contentLevelOf(contentLevel, env),
    contentMaxLength: whole(pick({ name: 'content max length', value: overrides.contentMaxLength }, 'CCOTEL_CONTENT_MAX_LENGTH', 'content_max_length'), DEFAULTS.contentMaxLength, 64, Number.MAX_SAFE_INTEGER, ' of characters'),
    idleMs: whole(pick({ name: '--idle', value: overrides.idleMs }, 'CCOTEL_IDLE_MS', 'idle_ms'), DEFAULTS.idleMs, 0, Number.MAX_SAFE_INTEGER, ' of ms'),
    scanIntervalMs: whole(pick({ name: '--scan-interval', value: overrides.scanIntervalMs }, 'CCOTEL_SCAN_INTERVAL_MS', 'scan_interval_ms'), DEFAULTS.scanIntervalMs, 100, Number.MAX_SAFE_INTEGER, ' of ms'),
    rawTtlDays: whole(pick({ name: '--raw-ttl-days', value: undefined }, 'CCOTEL_RAW_TTL_DAYS', 'raw_ttl_days'), DEFAULTS.rawTtlDays, 0, Number.MAX_SAFE_INTEGER, ' of days'),
    summaryTtlDays: whole(pick({ name: '--summary-ttl-days', value: undefined }, 'CCOTEL_SUMMARY_TTL_DAYS', 'summary_ttl_days'), DEFAULTS.summaryTtlDays, 0, Number.MAX_SAFE_INTEGER, ' of days'),
    flushIntervalMs: whole(
      pick({ name: 'flush interval', value: undefined }, 'CCOTEL_FLUSH_INTERVAL_MS', 'flush_interval_ms'),
      store === '' ? DEFAULTS.otlpOnlyFlushIntervalMs : DEFAULTS.flushIntervalMs,
      10,
      60_000,
      ' of ms',
    ),
    managedSettingsDir: text(pick({ name: 'managed settings dir', value: undefined }, 'CCOTEL_MANAGED_SETTINGS_DIR', 'managed_settings_dir'), DEFAULTS.managedSettingsDir),
    ticketPattern: patternOf(pick({ name: '--ticket-pattern', value: overrides.ticketPattern }, 'CCOTEL_TICKET_PATTERN', 'ticket_pattern')),
    nativeTelemetryPort: whole(pick({ name: '--telemetry-port', value: overrides.nativeTelemetryPort }, 'CCOTEL_NATIVE_TELEMETRY_PORT', 'native_telemetry_port'), DEFAULTS.nativeTelemetryPort, 0, 65_535),
    receiverListen: text(pick({ name: '--listen', value: overrides.receiverListen }, 'CCOTEL_RECEIVER_LISTEN', 'receiver_listen'), ''),
    receiverTokenFile: text(pick({ name: '--token-file', value: overrides.receiverTokenFile }, 'CCOTEL_RECEIVER_TOKEN_FILE', 'receiver_token_file'), ''),
    codexHome: text(pick({ name: '--codex-home', value: overrides.codexHome }, 'CODEX_HOME', 'codex_home'), join(env.HOME ?? '', '.codex')),
    insights: Object.fromEntries(Object.entries(INSIGHT_KEYS).map(([name, key]) => {
      const fallback = DEFAULTS.insights[name as keyof InsightThresholds];
      // Slow calls are kept from SLOW_TOOL_FLOOR_MS up (retention/insight-slots.ts): a lower threshold would miss the shorter ones.
      const [min, max] = name === 'cacheReadMinPercent' ? [0, 100] : name === 'slowToolMs' ? [SLOW_TOOL_FLOOR_MS, Number.MAX_SAFE_INTEGER] : [1, Number.MAX_SAFE_INTEGER];
      return [name, whole(pick({ name: key, value: undefined }, `CCOTEL_${key.toUpperCase()}`, key), fallback, min, max)];
    })) as unknown as InsightThresholds,
    paths,
  };
  for (const key of Object.keys(file)) {
    if (!fileKeys.includes(key)) throw new ConfigError(`${path}: unknown key "${key}" (did you mean "${closest(key, fileKeys)}"?)`);
  }
  return config;
}

/** A regular expression as given (JavaScript syntax); empty: none. */
function patternOf(setting: { value: unknown; from: string } | undefined): RegExp | undefined {
  if (setting === undefined || String(setting.value) === '') return undefined;
  try {
    return new RegExp(String(setting.value));
  } catch (error) {
    throw new ConfigError(`${setting.from} must be a regular expression, not ${JSON.stringify(setting.value)} (${(error as Error).message})`);
  }
}

/** `none` (or empty) means no store: OTLP only, and chdb is never loaded. */
function storeTarget(value: string): string {
  return value === 'none' ? '' : value;
}

function contentLevelOf(setting: { value: unknown; from: string } | undefined, env: Env): ContentLevel {
  const level = setting === undefined ? DEFAULTS.contentLevel : String(setting.value);
  if (level !== 'none' && level !== 'masked' && level !== 'raw') throw new ConfigError(`${setting!.from} must be "none" or "masked", not ${JSON.stringify(setting!.value)}`);
  if (level === 'raw' && env.CCOTEL_ALLOW_RAW_CONTENT !== '1') {
    throw new ConfigError('content level "raw" sends secrets unmasked: it needs the explicit opt-in CCOTEL_ALLOW_RAW_CONTENT=1');
  }
  return level;
}
