// A shell command of the shell log: its `shell {program}` span (an error when it exited non-zero) and its
// `ccotel.shell.command` log record, both in the trace of the Bash call it ran under. The TRACEPARENT Claude Code
// handed the command (its own `claude_code.tool.execution` span, with beta tracing on) becomes a span link, so the
// shell span is tied to both traces: ccotel's tool span as its parent, Claude Code's tool.execution by the link.
import type { ShellCommandEnded } from '../../events.js';
import type { Attributes, TelemetryBatch } from '../../model.js';
import { ATTRS, commonAttributes, EVENTS } from '../../semconv.js';
import { parseTraceparent } from '../correlate-shell.js';
import { LINK_TYPE } from '../native-join.js';
import { logRecord } from './records.js';

export function encodeShellCommand(command: ShellCommandEnded, out: TelemetryBatch): void {
  const { traceId, spanId, sessionId, commandLine, exitStatus, process } = command;
  const attributes: Attributes = {
    ...commonAttributes(sessionId, 'execute_command'),
    'process.pid': command.pid,
    'process.command_line': commandLine,
    'ccotel.command.length': command.commandLength,
    'ccotel.command.truncated': command.truncated,
  };
  if (exitStatus !== undefined) attributes['process.exit.code'] = exitStatus;
  else attributes['ccotel.shell.ended'] = false;
  const optional: [string, string | number | undefined][] = [
    ['process.parent_pid', command.parentPid],
    ['process.group_leader.pid', process.groupLeaderPid],
    ['process.session_leader.pid', process.sessionLeaderPid],
    ['ccotel.process.tty', process.tty],
    ['process.working_directory', process.cwd],
    ['ccotel.shell.traceparent', process.traceparent],
    [ATTRS.toolUseId, command.toolUseId],
  ];
  for (const [key, value] of optional) if (value !== undefined) attributes[key] = value;
  const failed = command.ended && exitStatus !== 0;
  // Under no ccotel tool span, the TRACEPARENT's span is already the parent (correlate-shell.ts).
  const native = parseTraceparent(process.traceparent);
  const links = native && native.spanId !== command.parentSpanId ? [{ ...native, traceState: '', attributes: { [LINK_TYPE]: 'tool_execution' } }] : undefined;
  out.spans.push({
    traceId,
    spanId,
    parentSpanId: command.parentSpanId,
    name: `shell ${programOf(commandLine)}`,
    kind: 'internal',
    startMs: command.startMs,
    endMs: command.spanEndMs,
    status: failed ? 'error' : 'unset',
    statusMessage: failed ? `exit status ${exitStatus}` : '',
    attributes,
    events: [],
    ...(links ? { links } : {}),
  });
  const logAttributes: Attributes = { 'process.command_line': commandLine, 'process.pid': command.pid, cwd: process.cwd ?? '' };
  if (exitStatus !== undefined) logAttributes['process.exit.code'] = exitStatus;
  if (command.toolUseId) logAttributes[ATTRS.toolUseId] = command.toolUseId;
  out.logs.push(logRecord({ eventName: EVENTS.shellCommand, severity: failed ? 'WARN' : 'INFO', timeMs: command.startMs, sessionId, traceId, spanId, body: commandLine, attributes: logAttributes, idSeed: spanId }));
}

/** The program a command line runs: its first word after any `VAR=value` assignments, without its directory. */
export function programOf(commandLine: string): string {
  const words = commandLine.trim().split(/\s+/);
  const word = words.find((w) => !/^[A-Za-z_][A-Za-z0-9_]*=/.test(w)) ?? '';
  const program = word.replace(/^.*\//, '').replace(/[;&|()<>].*$/, '');
  return program || 'sh';
}
