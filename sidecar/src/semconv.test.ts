// Every metric point the stages emit is one of the semconv definitions, with its unit, description and kind: a
// stage that spells a metric of its own (or an old copy of one) fails here.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { Pipeline } from './pipeline.js';
import { CapProcessor } from './processors/cap.js';
import { TranscriptCorrelator } from './processors/transcripts/correlator.js';
import { PriceChatsProcessor } from './processors/price-chats.js';
import { textLines } from './sources/line-reader.js';
import { METRICS, metricPoint, type MetricDefinition } from './semconv.js';
import { MemorySink } from '../../test/helpers/memory-sink.js';

const FIXTURES = join(import.meta.dirname, '..', '..', 'test', 'fixtures', 'real');

function transcripts(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return transcripts(path);
    return name.endsWith('.jsonl') && dir.includes('/projects') ? [path] : [];
  });
}

describe('semconv', () => {
  it('the points of the recorded Claude Code runs are the defined metrics, unit, description and kind included', async () => {
    const sink = new MemorySink();
    const pipeline = new Pipeline(new TranscriptCorrelator(), [new PriceChatsProcessor(), new CapProcessor(200)], [sink]);
    for (const path of transcripts(FIXTURES)) {
      const text = readFileSync(path, 'utf8');
      const lines = textLines(text.split('\n'));
      await pipeline.addLines({ path, kind: path.includes('/subagents/') || /agent-[^/]*\.jsonl$/.test(path) ? 'subagent' : 'main' }, lines);
    }
    await pipeline.finish();
    const byName = new Map<string, MetricDefinition>(Object.values(METRICS).map((metric) => [metric.name, metric]));
    const points = sink.received.metrics;
    const seen = new Set(points.map((point) => point.name));
    for (const name of ['ccotel.turns', 'ccotel.tokens', 'ccotel.tool.calls', 'ccotel.tool.duration', 'ccotel.session.starts', 'ccotel.cost', 'ccotel.truncations']) {
      expect(seen, name).toContain(name);
    }
    for (const point of points) {
      const definition = byName.get(point.name);
      expect(definition, point.name).toBeDefined();
      expect(point).toEqual(metricPoint(definition!, point));
    }
  });

  it('a point of a definition carries its name, unit, description and kind, and counts one unless told', () => {
    const point = metricPoint(METRICS.sessionEnds, { id: 'p', timeMs: 5, attributes: { reason: 'other' } });
    expect(point).toEqual({
      id: 'p', name: 'ccotel.session.ends', unit: '{session}', description: 'Session ends by reason', kind: 'sum', timeMs: 5, value: 1, attributes: { reason: 'other' }, traceId: '', spanId: '',
    });
  });
});
