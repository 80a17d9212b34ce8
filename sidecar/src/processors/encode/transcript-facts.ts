// Facts the transcript states beside turns and calls: a subagent's `invoke_agent {type}` span, permission mode
// changes, bash-mode commands (a log like the shell log's, for the rules on shell commands) and API errors.
import type { ApiErrorOccurred, PermissionModeChanged, SubagentEnded, UserShellCommand } from '../../events.js';
import type { Attributes, TelemetryBatch } from '../../model.js';
import { commonAttributes, EVENTS, providerAttributes } from '../../semconv.js';
import { logRecord } from './records.js';

export function encodeSubagent(agent: SubagentEnded, out: TelemetryBatch): void {
  out.spans.push({
    traceId: agent.traceId,
    spanId: agent.spanId,
    parentSpanId: agent.parentSpanId,
    name: `invoke_agent ${agent.agentType}`,
    kind: 'internal',
    startMs: agent.startMs,
    endMs: agent.endMs,
    status: 'unset',
    statusMessage: '',
    attributes: {
      ...commonAttributes(agent.sessionId, 'invoke_agent'),
      ...providerAttributes(agent.agent),
      'gen_ai.agent.name': agent.agentType,
      'ccotel.agent.id': agent.agentId,
      ...(agent.toolUseId ? { tool_use_id: agent.toolUseId } : {}),
    },
    events: [],
  });
}

export function encodePermissionMode(change: PermissionModeChanged, out: TelemetryBatch): void {
  const { sessionId, mode, timeMs } = change;
  const attributes: Attributes = { 'ccotel.permission.mode': mode };
  if (change.previousMode !== undefined) attributes['ccotel.permission.previous_mode'] = change.previousMode;
  const severity = mode === 'bypassPermissions' ? 'WARN' : 'INFO';
  out.logs.push(logRecord({ eventName: EVENTS.permissionModeChanged, severity, timeMs, sessionId, attributes, idSeed: `${sessionId}:${timeMs}:${mode}` }));
}

/** Keyed by time and command: a resume's copy repeats it. */
export function encodeUserShellCommand(command: UserShellCommand, out: TelemetryBatch): void {
  const { sessionId, timeMs } = command;
  const attributes = { 'process.command_line': command.command, cwd: command.cwd ?? '', 'ccotel.shell.origin': 'bash_mode', 'message.uuid': command.messageUuid };
  out.logs.push(logRecord({ eventName: EVENTS.shellCommand, severity: 'INFO', timeMs, sessionId, body: command.command, attributes, idSeed: `bash-mode:${timeMs}:${command.command}` }));
}

export function encodeApiError(error: ApiErrorOccurred, out: TelemetryBatch): void {
  const { sessionId, traceId, spanId, timeMs } = error;
  out.logs.push(logRecord({ eventName: EVENTS.apiError, severity: 'ERROR', timeMs, sessionId, traceId, spanId, body: error.text, attributes: { 'message.uuid': error.messageUuid }, idSeed: error.messageUuid }));
}
