// Options shared by several commands.
import { type Command } from 'commander';

export interface GlobalOptions {
  store?: string;
  otlp?: string;
  contentLevel?: string;
}

export function storeOption(command: Command): Command {
  return command.option('--store <path|url|none>', 'embedded store directory, ClickHouse server URL, or none (default: the XDG data dir)');
}

/**
 * For the commands that write: where telemetry goes besides (or instead of) the store, and how much text goes
 * with it. (A reading command has no use for the content level: given one, it is refused as an unknown option.)
 */
export function exportOption(command: Command): Command {
  return command
    .option('--otlp <url>', 'also send OTLP/HTTP to this collector endpoint (or set OTEL_EXPORTER_OTLP_ENDPOINT)')
    .option('--content-level <level>', 'none | masked: how much text leaves the sidecar');
}

/** `--since` as epoch ms: an ISO date or a duration ago such as 30m, 12h, 7d. */
export function parseSince(value: string, now = Date.now()): number {
  const duration = /^(\d+)\s*([mhdw])$/.exec(value.trim());
  if (duration) {
    const unit = { m: 60_000, h: 3_600_000, d: 86_400_000, w: 604_800_000 }[duration[2] as 'm' | 'h' | 'd' | 'w'];
    return now - Number(duration[1]) * unit;
  }
  const time = Date.parse(value);
  if (Number.isNaN(time)) throw new Error(`--since: "${value}" is neither a date nor a duration like 7d`);
  return time;
}

/** A TCP port flag; 0 asks for a random free one. */
export function portOption(value: string): number {
  const port = Number(value);
  if (!Number.isInteger(port) || port < 0 || port > 65_535) throw new Error(`not a port number: ${value}`);
  return port;
}
