import { describe, expect, it } from 'vitest';
import { parseTranscriptLine } from './parse-transcript.js';

const row = (extra: object) => JSON.stringify({ type: 'user', uuid: 'u1', sessionId: 's1', timestamp: '2026-11-01T10:00:00.000Z', message: { role: 'user', content: 'hi' }, ...extra });

describe('parseTranscriptLine', () => {
  it('parses conversation rows into entries with the fields the correlator uses', () => {
    const parsed = parseTranscriptLine(row({ promptId: 'p1', turnPosition: { promptIndex: 0, turnIndex: 2 } }));
    expect(parsed.ok).toBe(true);
    if (parsed.ok !== true) return;
    expect(parsed.entry).toMatchObject({ type: 'user', uuid: 'u1', sessionId: 's1', promptId: 'p1', timeMs: Date.parse('2026-11-01T10:00:00.000Z'), turnPosition: { promptIndex: 0, turnIndex: 2 } });
  });

  it('recognises non-conversation rows without parsing them, and counts every other line by reason', () => {
    expect(parseTranscriptLine('{"type":"attachment","attachment":{"type":"prompt_snapshot","x":"{\\"type\\":\\"oops"}}')).toEqual({ ok: 'ignored', type: 'attachment' });
    expect(parseTranscriptLine('{"type":"cost-state","sessionId":"s1"}')).toEqual({ ok: 'ignored', type: 'cost-state' });
    expect(parseTranscriptLine('{"type":"cost-state","totalCostUSD":1}')).toMatchObject({ ok: false, reason: 'missing_fields', type: 'cost-state' });
    expect(parseTranscriptLine('{"type":"user",')).toMatchObject({ ok: false, reason: 'malformed_json' });
    expect(parseTranscriptLine('not json')).toMatchObject({ ok: false, reason: 'malformed_json' });
    expect(parseTranscriptLine('[1,2]')).toMatchObject({ ok: false, reason: 'not_object' });
    expect(parseTranscriptLine('42')).toMatchObject({ ok: false, reason: 'not_object' });
    expect(parseTranscriptLine('{"type":"brand-new-row","a":1}')).toMatchObject({ ok: false, reason: 'unknown_type', type: 'brand-new-row' });
    expect(parseTranscriptLine(row({ timestamp: 'yesterday' }))).toMatchObject({ ok: false, reason: 'missing_fields' });
    expect(parseTranscriptLine(row({ message: undefined }))).toMatchObject({ ok: false, reason: 'missing_fields' });
  });

  it('reads Claude Code\'s own cost: cost-state rows, and costUSD on older assistant rows', () => {
    const state = parseTranscriptLine(JSON.stringify({
      type: 'cost-state', sessionId: 's1', totalCostUSD: 0.5, totalLinesAdded: 12, totalLinesRemoved: 3, startTime: 1_000, totalDuration: 500,
      modelUsage: { 'claude-opus-5-5': { costUSD: 0.4 }, 'claude-new-model': { costUSD: 0.1 } }, hasUnknownModelCost: true,
    }));
    expect(state).toMatchObject({ ok: true, entry: { type: 'cost-state', sessionId: 's1', timeMs: 1_500, costState: {
      totalCostUsd: 0.5, costByModel: { 'claude-opus-5-5': 0.4, 'claude-new-model': 0.1 }, hasUnknownModelCost: true, linesAdded: 12, linesRemoved: 3,
    } } });
    const assistant = parseTranscriptLine(JSON.stringify({ type: 'assistant', uuid: 'a1', sessionId: 's1', timestamp: '2025-06-01T10:00:00.000Z',
      costUSD: 0.0123, message: { id: 'msg_1', role: 'assistant', content: [] } }));
    expect(assistant).toMatchObject({ ok: true, entry: { costUSD: 0.0123 } });
  });

  it('does not take a nested type literal for the row type', () => {
    // A user row whose text mentions another type literal first is still parsed as the user row it is.
    const parsed = parseTranscriptLine(JSON.stringify({ message: { role: 'user', content: '{"type":"attachment"}' }, type: 'user', uuid: 'u2', sessionId: 's1', timestamp: '2026-11-01T10:00:00.000Z' }));
    expect(parsed.ok).toBe(true);
  });

  it('survives deeply nested JSON', () => {
    const deep = '{"a":'.repeat(5000) + '1' + '}'.repeat(5000);
    expect(() => parseTranscriptLine(deep)).not.toThrow();
  });
});
