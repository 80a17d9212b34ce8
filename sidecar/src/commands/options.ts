// Options shared by several commands.
import type { Command } from 'commander';
import { parseArgs } from 'node:util';

export interface GlobalOptions {
  store?: string;
  otlp?: string;
  contentLevel?: string;
  ticketPattern?: string;
}

/** An option as commander takes it: flags, description, and the function that checks and converts its value. */
export interface OptionSpec {
  flags: string;
  description: string;
  parse?: (value: string) => unknown;
}

export const STORE_OPTION: OptionSpec = { flags: '--store <path|url|none>', description: 'embedded store directory, ClickHouse server URL, or none (default: the XDG data dir)' };

export function storeOption(command: Command): Command {
  return command.option(STORE_OPTION.flags, STORE_OPTION.description);
}

/**
 * `args` (what follows the command's name) read with `specs` the way commander reads them, without loading commander
 * (~0.03 s of CPU, a tenth of a report through a running sidecar): long options only, `--name value` or `--name=value`,
 * the last given wins, `parse` applied. Undefined for anything else (help, an unknown option, a missing value, too
 * many arguments): commander then reads them, and says what is wrong as it always has.
 */
export function parseCommandArgs(args: string[], specs: OptionSpec[], maxArguments: number): { positionals: string[]; options: Record<string, unknown> } | undefined {
  const named = specs.map((spec) => ({ ...spec, name: /^--([a-z-]+)/.exec(spec.flags)![1] }));
  const config = Object.fromEntries(named.map(({ flags, name }) => [name, { type: flags.includes('<') ? ('string' as const) : ('boolean' as const) }]));
  let parsed: ReturnType<typeof parseArgs<{ args: string[]; options: typeof config; allowPositionals: true; strict: true }>>;
  try {
    parsed = parseArgs({ args, options: config, allowPositionals: true, strict: true });
  } catch {
    return undefined;
  }
  if (parsed.positionals.length > maxArguments || args.includes('--')) return undefined;
  const options: Record<string, unknown> = {};
  for (const { name, parse } of named) {
    const value = parsed.values[name];
    // commander's key: --content-level is contentLevel
    const key = name.replace(/-([a-z])/g, (_, letter: string) => letter.toUpperCase());
    if (value !== undefined) options[key] = parse && typeof value === 'string' ? parse(value) : value;
  }
  return { positionals: parsed.positionals, options };
}

/**
 * For the commands that write: where telemetry goes besides (or instead of) the store, and how much text goes
 * with it. (A reading command has no use for the content level: given one, it is refused as an unknown option.)
 */
export function exportOption(command: Command): Command {
  return command
    .option('--otlp <url>', 'also send OTLP/HTTP to this collector endpoint (or set OTEL_EXPORTER_OTLP_ENDPOINT)')
    .option('--content-level <level>', 'none | masked: how much text leaves the sidecar')
    .option('--ticket-pattern <regex>', 'the ticket in a branch name (ccotel.ticket: its first group, else the match), e.g. "[A-Z]+-[0-9]+" (default: none)');
}

/** For the commands that read agents' files: where Codex's rollouts are. */
export function codexHomeOption(command: Command): Command {
  return command.option('--codex-home <dir>', 'Codex CLI home whose rollouts are read too (default: $CODEX_HOME or ~/.codex)');
}

/** `--since` as epoch ms: an ISO date or a duration ago such as 30m, 12h, 7d. */
export function parseSince(value: string, now = Date.now()): number {
  const duration = /^(\d+)\s*([mhdw])$/.exec(value.trim());
  if (duration) {
    const unit = { m: 60_000, h: 3_600_000, d: 86_400_000, w: 604_800_000 }[duration[2] as 'm' | 'h' | 'd' | 'w'];
    return now - Number(duration[1]) * unit;
  }
  const time = Date.parse(value);
  const day = /^\d{4}-\d{2}-\d{2}/.exec(value.trim())?.[0];
  if (Number.isNaN(time) || (day !== undefined && !isRealDay(day))) throw new Error(`--since: "${value}" is not a date, nor a duration like 7d`);
  return time;
}

/** YYYY-MM-DD is a day of the calendar: Date rolls 2025-02-30 over into March. */
export function isRealDay(day: string): boolean {
  const time = Date.parse(`${day}T00:00:00Z`);
  return !Number.isNaN(time) && new Date(time).toISOString().startsWith(day);
}

/** A TCP port flag; 0 asks for a random free one. */
export function portOption(value: string): number {
  const port = Number(value);
  if (!Number.isInteger(port) || port < 0 || port > 65_535) throw new Error(`not a port number: ${value}`);
  return port;
}

/**
 * `--timezone` checked as it is parsed, so a bad one is one line before any store is opened (the engine's
 * refusal came as a client stack); the zone as the runtime names it (`europe/paris` → `Europe/Paris`).
 */
export function timezoneOption(value: string): string {
  // The runtime's own list first: a zone named there (or UTC) is checked without building a date formatter, which
  // loads the zone and calendar data (~0.03 s of CPU, a tenth of a report through a running sidecar). Every listed
  // zone resolves to its listed name (options.test.ts).
  if (value.toUpperCase() === 'UTC') return 'UTC';
  const listed = Intl.supportedValuesOf('timeZone').find((zone) => zone.toLowerCase() === value.toLowerCase());
  if (listed !== undefined) return listed;
  try {
    return new Intl.DateTimeFormat('en-US', { timeZone: value }).resolvedOptions().timeZone;
  } catch {
    throw new Error(`--timezone: "${value}" is not a time zone (an IANA name such as Europe/Paris, or UTC)`);
  }
}
