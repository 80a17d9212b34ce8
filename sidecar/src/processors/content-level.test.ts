import { describe, expect, it } from 'vitest';
import type { TelemetryBatch } from '../model.js';
import { NoContentProcessor } from './content-level.js';

describe('content level none', () => {
  it('keeps ids, names, sizes and outcomes, and drops every text field', async () => {
    const batch: TelemetryBatch = {
      spans: [{
        traceId: 't'.repeat(32), spanId: 's'.repeat(16), parentSpanId: '', name: 'execute_tool Bash', kind: 'internal', startMs: 1, endMs: 2,
        status: 'error', statusMessage: 'Exit code 1: cat ~/.aws/credentials',
        attributes: { 'gen_ai.tool.name': 'Bash', 'ccotel.tool.outcome': 'error', 'ccotel.tool.input': '{"command":"cat ~/.aws/credentials"}', 'ccotel.tool.input.length': 36, 'process.command_line': 'cat x' },
        events: [
          { name: 'PreToolUse', timeMs: 1, attributes: { 'ccotel.tool.input': 'cat x', tool_use_id: 'toolu_1' } },
          { name: 'PostToolUseFailure', timeMs: 2, attributes: { error: 'cat: /srv/app/.env.prod: Permission denied', tool_use_id: 'toolu_1' } },
        ],
      }],
      logs: [{ id: 'l', timeMs: 1, eventName: 'ccotel.prompt.submitted', severity: 'INFO', traceId: '', spanId: '', body: 'my prompt', attributes: { 'ccotel.prompt.length': 9, 'ccotel.prompt': 'my prompt' } }],
      metrics: [],
    };
    const out = await new NoContentProcessor().process(batch);
    expect(out.spans[0].attributes).toEqual({ 'gen_ai.tool.name': 'Bash', 'ccotel.tool.outcome': 'error', 'ccotel.tool.input.length': 36 });
    expect(out.spans[0].statusMessage).toBe('');
    expect(out.spans[0].events.map((event) => event.attributes)).toEqual([{ tool_use_id: 'toolu_1' }, { tool_use_id: 'toolu_1' }]);
    expect(out.logs[0]).toMatchObject({ body: '', attributes: { 'ccotel.prompt.length': 9 } });
    expect(JSON.stringify(out)).not.toMatch(/credentials|my prompt|cat x|env\.prod/);
  });
});
