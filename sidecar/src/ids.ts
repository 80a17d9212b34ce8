import { hash } from 'node:crypto';

// Deterministic ids: the same input always yields the same trace/span/record id, so a re-read after a
// crash or a second backfill produces rows the sink (or a query) recognises as repeats.

// One-shot hashing: a Hash object per id cost twice the CPU (ids are made for every row).
function digest(parts: readonly string[]): string {
  return hash('sha256', `${parts.join('\u0000')}\u0000`, 'hex');
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
