// Disk space for the OTLP queue: while the collector is unreachable the sidecar keeps data in
// $STATE/otlp-queue up to its bound, so the filesystem must have room for the whole bound.
import { existsSync, statfsSync } from 'node:fs';
import { dirname } from 'node:path';
import { DEFAULT_QUEUE_MAX_BYTES } from '../sinks/otlp-sink.js';
import { result, type Check } from './check.js';

const MIB = 1024 * 1024;
/** Without an OTLP queue, what the embedded store and checkpoints need to keep going for a while. */
const STORE_ONLY_MINIMUM = 512 * MIB;

function nearestExisting(path: string): string {
  while (!existsSync(path) && dirname(path) !== path) path = dirname(path);
  return path;
}

export const diskCheck: Check = async (context) => {
  const queueDir = context.config.paths.otlpQueueDir;
  const queueMb = context.env.CCOTEL_OTLP_QUEUE_MAX_MB;
  const queueBytes = queueMb !== undefined && Number(queueMb) > 0 ? Number(queueMb) * MIB : DEFAULT_QUEUE_MAX_BYTES;
  const otlp = context.config.otlpEndpoint !== '';
  const needed = otlp ? queueBytes : STORE_ONLY_MINIMUM;
  const stats = statfsSync(nearestExisting(queueDir));
  const free = stats.bavail * stats.bsize;
  const what = otlp ? `the OTLP queue (bound ${Math.round(queueBytes / MIB)} MiB, CCOTEL_OTLP_QUEUE_MAX_MB)` : 'the store and checkpoints';
  const text = `${Math.round(free / MIB)} MiB free for ${what} at ${nearestExisting(queueDir)}`;
  if (free < needed) return result('disk', 'fail', `${text}: not enough`, `free space on that filesystem${otlp ? ', or lower CCOTEL_OTLP_QUEUE_MAX_MB' : ''}`);
  if (free < 2 * needed) return result('disk', 'warn', `${text}: less than twice the need`, 'free space on that filesystem');
  return result('disk', 'ok', text);
};
