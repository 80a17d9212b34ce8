// A closed turn: its `invoke_agent {agent}` root span (compactions and the hooks joined onto it as span
// events, the fingerprint of the rules in force), the prompt log (when its prompt was read), the end log and a turn
// count; and a compaction's log.
import type { CompactionOccurred, HookAttached, RulesApplied, TurnEnded } from '../../events.js';
import type { Attributes, TelemetryBatch } from '../../model.js';
import { commonAttributes, DEFAULT_AGENT, EVENTS, METRICS, providerAttributes, turnSpanName } from '../../semconv.js';
import { attachHooks } from './hooks.js';
import { applyRules } from './settings.js';
import { logRecord, point } from './records.js';

export function encodeTurn(turn: TurnEnded, out: TelemetryBatch, hooks: readonly HookAttached[] | undefined, rules?: RulesApplied): void {
  const { traceId, spanId, sessionId, outcome, promptText, messageUuid, agent = DEFAULT_AGENT } = turn;
  const attributes: Attributes = {
    ...commonAttributes(sessionId, 'invoke_agent'),
    ...providerAttributes(agent),
    'gen_ai.agent.name': agent,
    'message.uuid': messageUuid,
    'ccotel.turn.outcome': outcome,
    'ccotel.prompt.length': promptText.length,
    [`ccotel.${agent.replace('-', '_')}.version`]: turn.version ?? '',
  };
  if (turn.permissionMode) attributes['ccotel.permission.mode'] = turn.permissionMode;
  if (turn.promptSeen === false) attributes['ccotel.turn.prompt_seen'] = false;
  if (turn.commandName !== undefined) attributes['ccotel.command.name'] = turn.commandName;
  if (turn.promptId) attributes['prompt.id'] = turn.promptId;
  attributes['ccotel.prompt'] = promptText;
  const span = {
    traceId,
    spanId,
    parentSpanId: '',
    name: turnSpanName(agent),
    kind: 'internal' as const,
    startMs: turn.startMs,
    endMs: turn.endMs,
    status: outcome === 'error' ? ('error' as const) : ('unset' as const),
    statusMessage: outcome === 'error' ? 'API error' : '',
    attributes,
    events: (turn.compactions ?? []).map((compaction) => ({ name: 'compaction', timeMs: compaction.timeMs, attributes: compactionAttributes(compaction) })),
  };
  attachHooks(span, hooks);
  applyRules(span, rules);
  out.spans.push(span);
  if (turn.promptSeen !== false) {
    const promptAttributes: Attributes = { 'message.uuid': messageUuid, 'ccotel.prompt.length': promptText.length };
    if (turn.promptId) promptAttributes['prompt.id'] = turn.promptId;
    out.logs.push(logRecord({ eventName: EVENTS.promptSubmitted, severity: 'INFO', timeMs: turn.startMs, sessionId, traceId, spanId, body: promptText, attributes: promptAttributes, idSeed: spanId }));
  }
  const severity = outcome === 'error' ? 'WARN' : 'INFO';
  out.logs.push(logRecord({ eventName: EVENTS.turnEnded, severity, timeMs: turn.endMs, sessionId, traceId, spanId, attributes: { outcome, 'message.uuid': messageUuid }, idSeed: spanId }));
  out.metrics.push(point(METRICS.turns, { timeMs: turn.endMs, value: 1, attributes: { outcome }, traceId, spanId, idSeed: spanId }));
}

export function encodeCompaction(compaction: CompactionOccurred, out: TelemetryBatch): void {
  const { traceId, spanId, sessionId, timeMs } = compaction;
  out.logs.push(logRecord({
    eventName: EVENTS.compactionOccurred,
    severity: 'INFO',
    timeMs,
    sessionId,
    traceId,
    spanId,
    attributes: { ...compactionAttributes(compaction), 'message.uuid': compaction.messageUuid },
    // Keyed by time, not uuid: a copy of the history in another file repeats it with a fresh uuid.
    idSeed: `${timeMs}:${compaction.preTokens ?? ''}`,
  }));
}

function compactionAttributes({ trigger, preTokens }: { trigger?: string; preTokens?: number }): Attributes {
  return { trigger: trigger ?? 'unknown', 'ccotel.compaction.pre_tokens': preTokens ?? 0 };
}
