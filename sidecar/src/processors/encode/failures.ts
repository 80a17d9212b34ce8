// What the detectors and the session state tracker tell: a failure mode's log record and point, in the trace
// context of its tool call, and a session's state change as a log record.
import type { FailureDetected, SessionStateChanged } from '../../events.js';
import type { Attributes, TelemetryBatch } from '../../model.js';
import { ATTRS, EVENTS, METRICS, metricPoint, pointIdOf } from '../../semconv.js';

export function encodeFailure(failure: FailureDetected, out: TelemetryBatch): void {
  const { id, sessionId, mode, timeMs, traceId, spanId } = failure;
  const attributes: Attributes = { [ATTRS.sessionId]: sessionId, mode };
  if (failure.toolUseId) attributes[ATTRS.toolUseId] = failure.toolUseId;
  if (failure.process) {
    attributes['process.pid'] = failure.process.pid;
    attributes['process.command_line'] = failure.process.commandLine;
    attributes['process.parent_pid'] = failure.process.ppid;
  }
  if (failure.agentPid !== undefined) attributes['process.pid'] = failure.agentPid;
  if (failure.port !== undefined) attributes['network.local.port'] = failure.port;
  if (failure.cause) attributes.cause = failure.cause;
  out.logs.push({ id, timeMs, eventName: EVENTS.failureModeDetected, severity: 'WARN', body: failure.detail ?? '', attributes, traceId, spanId });
  out.metrics.push(metricPoint(METRICS.failureModes, { id: pointIdOf(METRICS.failureModes, id), timeMs, attributes: { mode }, traceId, spanId }));
}

export function encodeStateChange(change: SessionStateChanged, out: TelemetryBatch): void {
  const { id, sessionId, state, timeMs, reason } = change;
  const attributes: Attributes = { [ATTRS.sessionId]: sessionId, state, previous_state: change.previousState ?? '' };
  if (reason) attributes.reason = reason;
  out.logs.push({ id, timeMs, eventName: EVENTS.sessionStateChanged, severity: state === 'abandoned' ? 'WARN' : 'INFO', traceId: '', spanId: '', body: '', attributes });
}
