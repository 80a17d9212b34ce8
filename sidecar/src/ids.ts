import { createHash } from 'node:crypto';

// Deterministic ids: the same input always yields the same trace/span/record id, so a re-read after a
// crash or a second backfill produces rows the sink (or a query) recognises as repeats.

function digest(parts: readonly string[]): string {
  const hash = createHash('sha256');
  for (const part of parts) hash.update(part).update('\u0000');
  return hash.digest('hex');
}

export function traceIdOf(...parts: string[]): string {
  return digest(['trace', ...parts]).slice(0, 32);
}

export function spanIdOf(...parts: string[]): string {
  return digest(['span', ...parts]).slice(0, 16);
}

export function recordIdOf(...parts: string[]): string {
  return digest(['record', ...parts]).slice(0, 32);
}
