import { describe, expect, it } from 'vitest';
import type { ShellCommandEnded } from '../../events.js';
import { emptyBatch } from '../../model.js';
import { RECEIVED_SPAN_COLUMNS, RowMapper, withLinks } from '../../sinks/clickhouse-rows.js';
import { encodeShellCommand } from './shell.js';

const NATIVE = { traceId: 'a'.repeat(32), spanId: 'b'.repeat(16) };
const TRACEPARENT = `00-${NATIVE.traceId}-${NATIVE.spanId}-01`;

function shellSpan(parentSpanId: string, traceparent?: string) {
  const command: ShellCommandEnded = {
    kind: 'ShellCommandEnded', traceId: 'c'.repeat(32), spanId: 'd'.repeat(16), parentSpanId, sessionId: 's', pid: 42, toolUseId: 'toolu_1',
    startMs: 1000, endMs: 1500, spanEndMs: 1500, commandLine: 'echo hi', commandLength: 7, truncated: false, ended: true, exitStatus: 0, process: { traceparent },
  };
  const out = emptyBatch();
  encodeShellCommand(command, out);
  return out.spans[0];
}

describe('a shell span and the TRACEPARENT Claude Code handed its command', () => {
  it("under ccotel's tool span, links to Claude Code's tool.execution span, and is stored with the link", () => {
    const span = shellSpan('e'.repeat(16), TRACEPARENT);
    expect(span.parentSpanId).toBe('e'.repeat(16));
    expect(span.links).toEqual([{ ...NATIVE, traceState: '', attributes: { 'ccotel.link.type': 'tool_execution' } }]);
    expect(withLinks(span)).toBe(true);
    const row = new RowMapper({ 'service.name': 'ccotel' }, 'test').span(span);
    expect(row).toHaveLength(RECEIVED_SPAN_COLUMNS.length);
    expect(row.slice(-4, -1)).toEqual([[NATIVE.traceId], [NATIVE.spanId], ['']]);
  });

  it('has no link where the TRACEPARENT span is its parent already (no ccotel tool span), or none was handed', () => {
    expect(shellSpan(NATIVE.spanId, TRACEPARENT).links).toBeUndefined();
    expect(shellSpan('e'.repeat(16)).links).toBeUndefined();
  });
});
