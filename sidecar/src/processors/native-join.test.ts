import { describe, expect, it } from 'vitest';
import type { LogRecord, SpanRecord, TelemetryBatch } from '../model.js';
import { LINK_TYPE, NATIVE_ATTRIBUTES, NativeJoin } from './native-join.js';
import { nativeDialects } from '../sources/native-telemetry.js';

const AT = Date.parse('2026-11-29T17:24:46Z');
const origin = { resource: { 'service.name': 'claude-code' }, scopeName: 'com.anthropic.claude_code.tracing', scopeVersion: '1.0.0' };

function chat(request: string): SpanRecord {
  return {
    traceId: 'c'.repeat(32), spanId: `${request.slice(-4)}`.padStart(16, '0'), parentSpanId: '1'.repeat(16), name: 'chat claude-opus-5-5', kind: 'client',
    startMs: AT, endMs: AT + 200, status: 'ok', statusMessage: '', attributes: { 'session.id': 's', request_id: request }, events: [],
  };
}

function llmRequest(request: string, ttft: number, duration: number): SpanRecord {
  return {
    origin: { ...origin, spanKind: 'SPAN_KIND_INTERNAL', traceState: '', links: [] },
    traceId: 'd'.repeat(32), spanId: `${request.slice(-4)}`.padStart(16, 'e'), parentSpanId: 'f'.repeat(16), name: 'claude_code.llm_request', kind: 'internal',
    startMs: AT, endMs: AT + duration, status: 'unset', statusMessage: '', attributes: { 'session.id': 's', request_id: request, ttft_ms: ttft, duration_ms: duration }, events: [],
  };
}

function apiRequest(request: string, ttft: number, duration: number): LogRecord {
  return {
    origin: { ...origin, scopeName: 'com.anthropic.claude_code.events', severityText: '', severityNumber: 0, traceFlags: 0 },
    id: request.padEnd(32, '0'), timeMs: AT + duration, eventName: '', severity: 'INFO', traceId: '', spanId: '', body: 'claude_code.api_request',
    attributes: { 'session.id': 's', 'event.name': 'api_request', request_id: request, ttft_ms: ttft, duration_ms: duration },
  };
}

const batch = (parts: Partial<TelemetryBatch>): TelemetryBatch => ({ spans: [], logs: [], metrics: [], ...parts });

describe('NativeJoin: a native request record and ccotel’s chat span, by request_id, in either order', () => {
  it('gives the chat span the API duration and TTFT when Claude Code told them first (its event, or its span)', async () => {
    const join = new NativeJoin(nativeDialects());
    await join.process(batch({ logs: [apiRequest('req_0001', 24, 156)] }));
    await join.process(batch({ spans: [llmRequest('req_0002', 39, 181)] }));
    const input = batch({ spans: [chat('req_0001'), chat('req_0002'), chat('req_0003')] });
    const { spans } = await join.process(input);
    expect(spans.map((span) => [span.attributes[NATIVE_ATTRIBUTES.apiDurationMs], span.attributes[NATIVE_ATTRIBUTES.ttftMs]])).toEqual([[156, 24], [181, 39], [undefined, undefined]]);
    expect(input.spans[0].attributes).not.toHaveProperty(NATIVE_ATTRIBUTES.ttftMs);
  });

  it('links the native llm_request span to the chat span when ccotel had it first', async () => {
    const join = new NativeJoin(nativeDialects());
    const ours = chat('req_0004');
    await join.process(batch({ spans: [ours] }));
    const input = batch({ spans: [llmRequest('req_0004', 30, 120), llmRequest('req_0005', 30, 120)] });
    const { spans } = await join.process(input);
    expect(spans[0].origin?.links).toEqual([{ traceId: ours.traceId, spanId: ours.spanId, traceState: '', attributes: { [LINK_TYPE]: 'chat' } }]);
    expect(spans[1].origin?.links).toEqual([]);
    expect(input.spans[0].origin?.links).toEqual([]);
  });
});

describe('NativeJoin: a native tool call and ccotel’s tool span, by tool_use_id', () => {
  const toolSpan = (id: string): SpanRecord => ({ ...chat('req_0009'), spanId: id.slice(-16).padStart(16, '0'), name: 'execute_tool Bash', attributes: { 'session.id': 's', 'gen_ai.tool.call.id': id } });
  const nativeTool = (id: string, spanId: string): SpanRecord => ({ ...llmRequest('req_0000', 0, 0), spanId, name: 'claude_code.tool', attributes: { 'session.id': 's', tool_use_id: id } });
  const blocked = (parent: string, ms: number): SpanRecord => ({ ...llmRequest('req_0000', 0, ms), spanId: '9'.repeat(16), parentSpanId: parent, name: 'claude_code.tool.blocked_on_user', attributes: { decision: 'accept', source: 'user_temporary' } });
  const decision = (id: string): LogRecord => ({ ...apiRequest('req_0000', 0, 0), attributes: { 'event.name': 'tool_decision', tool_use_id: id, decision: 'accept', source: 'config' } });

  it('gives the tool span the decision, its source and the time blocked on the user when Claude Code told them first', async () => {
    const join = new NativeJoin(nativeDialects());
    // The blocked span may come before its parent in an export.
    await join.process(batch({ spans: [blocked('a'.repeat(16), 4200), nativeTool('toolu_01', 'a'.repeat(16))] }));
    await join.process(batch({ logs: [decision('toolu_02')] }));
    const { spans } = await join.process(batch({ spans: [toolSpan('toolu_01'), toolSpan('toolu_02')] }));
    expect(spans.map((span) => [span.attributes[NATIVE_ATTRIBUTES.decisionSource], span.attributes[NATIVE_ATTRIBUTES.blockedMs]])).toEqual([['user_temporary', 4200], ['config', undefined]]);
    expect(spans[0].attributes[NATIVE_ATTRIBUTES.decision]).toBe('accept');
  });

  it('links the native tool span to ccotel’s when ccotel had it first', async () => {
    const join = new NativeJoin(nativeDialects());
    const ours = toolSpan('toolu_03');
    await join.process(batch({ spans: [ours] }));
    const { spans } = await join.process(batch({ spans: [nativeTool('toolu_03', 'b'.repeat(16))] }));
    expect(spans[0].origin?.links).toEqual([{ traceId: ours.traceId, spanId: ours.spanId, traceState: '', attributes: { [LINK_TYPE]: 'tool' } }]);
  });
});
