// The recorded Claude Code samples under test/fixtures/real (each a Claude config dir holding `projects`), and the
// pipeline's whole output as comparable lines.
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import type { MemorySink } from '../helpers/memory-sink.js';

/** Their paths under `fixtures`: `<scenario>` (the pinned release) and `<release>/<scenario>`. */
export function recordedFixtures(fixtures: string): string[] {
  return readdirSync(fixtures, { withFileTypes: true })
    .filter((entry) => entry.isDirectory())
    .flatMap((entry) => {
      const dir = join(fixtures, entry.name);
      // A release folder holds one recorded scenario per subfolder; a scenario folder holds its own `projects`.
      if (existsSync(join(dir, 'projects'))) return [entry.name];
      return readdirSync(dir).filter((name) => existsSync(join(dir, name, 'projects'))).map((name) => `${entry.name}/${name}`);
    });
}

/** JSON with object keys sorted: the same content gives the same text whatever order the code set its fields in. */
function canonical(value: unknown): string {
  return JSON.stringify(value, (_key, inner: unknown) =>
    inner && typeof inner === 'object' && !Array.isArray(inner) ? Object.fromEntries(Object.entries(inner).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) : inner,
  );
}

/** Every item the sink received as `kind id content`, sorted (delivery order is not part of the output). */
export function outputLines(sink: MemorySink): string[] {
  const { spans, logs, metrics } = sink.received;
  return [
    ...spans.map((span) => `span ${span.spanId} ${canonical(span)}`),
    ...logs.map((log) => `log ${log.id} ${canonical(log)}`),
    ...metrics.map((point) => `point ${point.id} ${canonical(point)}`),
  ].sort();
}
