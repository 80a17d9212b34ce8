// The sidecar's semantic conventions (DESIGN section 5), written once: every metric with its unit and description,
// the log event, span and attribute names more than one stage relies on, the keys the sinks put on the wire, and
// the id recipes two stages must agree on (a start the hook and the transcript both see is one start because
// both compute its id here).
import { recordIdOf, spanIdOf } from './ids.js';
import type { Attributes, MetricPoint } from './model.js';

export interface MetricDefinition {
  readonly name: string;
  readonly unit: string;
  readonly description: string;
  readonly kind: MetricPoint['kind'];
  /** A histogram's explicit bounds, when not HISTOGRAM_BOUNDS. */
  readonly bounds?: readonly number[];
}

/** The bounds the GenAI semantic conventions advise for `gen_ai.client.token.usage` (powers of 4). */
const TOKEN_BOUNDS = [1, 4, 16, 64, 256, 1024, 4096, 16384, 65536, 262144, 1048576, 4194304, 16777216, 67108864];
/** The bounds the GenAI semantic conventions advise for `gen_ai.client.operation.duration` (seconds, doubling). */
const OPERATION_BOUNDS = [0.01, 0.02, 0.04, 0.08, 0.16, 0.32, 0.64, 1.28, 2.56, 5.12, 10.24, 20.48, 40.96, 81.92];

export const METRICS = {
  turns: { name: 'ccotel.turns', unit: '{turn}', description: 'Turns by outcome', kind: 'sum' },
  tokens: { name: 'ccotel.tokens', unit: '{token}', description: 'Tokens by type and model', kind: 'sum' },
  toolCalls: { name: 'ccotel.tool.calls', unit: '{call}', description: 'Tool calls by tool and outcome', kind: 'sum' },
  toolDuration: { name: 'ccotel.tool.duration', unit: 's', description: 'Tool call duration', kind: 'histogram' },
  sessionStarts: { name: 'ccotel.session.starts', unit: '{session}', description: 'Session starts by source', kind: 'sum' },
  sessionEnds: { name: 'ccotel.session.ends', unit: '{session}', description: 'Session ends by reason', kind: 'sum' },
  permissionBlocks: { name: 'ccotel.permission.blocks', unit: '{block}', description: 'Permission blocks by tool and source', kind: 'sum' },
  failureModes: { name: 'ccotel.failure_modes', unit: '{event}', description: 'Failure modes of the agent runtime detected, by mode', kind: 'sum' },
  cost: { name: 'ccotel.cost', unit: 'USD', description: 'Cost of the API responses by model and token type, from the price table', kind: 'sum' },
  linesOfCode: { name: 'ccotel.lines_of_code', unit: '{line}', description: 'Lines of code Claude Code added or removed, as it counts them', kind: 'sum' },
  redactions: { name: 'ccotel.redactions', unit: '{secret}', description: 'Secrets masked before export, by detection rule', kind: 'sum' },
  truncations: { name: 'ccotel.truncations', unit: '{field}', description: 'Content fields cut to the configured maximum length', kind: 'sum' },
  sidecarRecords: { name: 'ccotel.sidecar.records', unit: '{record}', description: 'Input records the sidecar could not use, by source and reason', kind: 'sum' },
  genAiTokenUsage: {
    name: 'gen_ai.client.token.usage', unit: '{token}', description: 'Tokens of each API response by type (input includes cache reads and writes), as the GenAI conventions define it',
    kind: 'histogram', bounds: TOKEN_BOUNDS,
  },
  genAiOperationDuration: {
    name: 'gen_ai.client.operation.duration', unit: 's', description: 'Duration of each API response, as the transcript times it', kind: 'histogram', bounds: OPERATION_BOUNDS,
  },
  exportDropped: {
    name: 'ccotel.sidecar.export.dropped',
    unit: '{item}',
    description: 'Telemetry items the sidecar could not deliver (disk queue full, or rejected by the collector)',
    kind: 'sum',
  },
} as const satisfies Record<string, MetricDefinition>;

/** The agents observed (DESIGN §12): `gen_ai.agent.name` of their turns and the provider of their models. */
export const AGENTS = {
  'claude-code': { provider: 'anthropic' },
  codex: { provider: 'openai' },
} as const;
export type AgentName = keyof typeof AGENTS;
/** An event that names no agent is Claude Code's (the first agent, whose events predate the others). */
export const DEFAULT_AGENT: AgentName = 'claude-code';

/** `gen_ai.provider.name` of an agent's agent and chat spans (GenAI semantic conventions). */
export function providerAttributes(agent: AgentName = DEFAULT_AGENT): { 'gen_ai.provider.name': string } {
  return { 'gen_ai.provider.name': AGENTS[agent].provider };
}
/** The agent a turn's summary names: facts written before they named one are Claude Code's (the only agent then). */
export function agentOfTurnFact(name: string): AgentName {
  return name in AGENTS ? (name as AgentName) : DEFAULT_AGENT;
}

/** The root span of an agent's turn: `invoke_agent {agent}`. */
export function turnSpanName(agent: AgentName = DEFAULT_AGENT): string {
  return `invoke_agent ${agent}`;
}

/** Log record event names (`ccotel.<noun>.<verb>`). Hook records are `HOOK_EVENT_PREFIX` + the hook in snake_case. */
export const EVENTS = {
  turnEnded: 'ccotel.turn.ended',
  promptSubmitted: 'ccotel.prompt.submitted',
  toolCompleted: 'ccotel.tool.completed',
  apiError: 'ccotel.api.error',
  compactionOccurred: 'ccotel.compaction.occurred',
  shellCommand: 'ccotel.shell.command',
  permissionModeChanged: 'ccotel.permission_mode.changed',
  permissionBlocked: 'ccotel.permission.blocked',
  sessionStarted: 'ccotel.session.started',
  sessionEnded: 'ccotel.session.ended',
  sessionStateChanged: 'ccotel.session.state_changed',
  failureModeDetected: 'ccotel.failure_mode.detected',
  costReported: 'ccotel.cost.reported',
  secretDetected: 'ccotel.secret.detected',
  recordSkipped: 'ccotel.record.skipped',
  exportDropped: 'ccotel.export.dropped',
  settingsChanged: 'ccotel.settings.changed',
  settingsEffective: 'ccotel.settings.effective',
} as const;

export const HOOK_EVENT_PREFIX = 'ccotel.hook.';

/** Span names a stage reads: the turn root, and the prefix of chat spans (followed by the model). */
export const SPANS = {
  turn: turnSpanName(DEFAULT_AGENT),
  chatPrefix: 'chat ',
} as const;

/** Attribute names that one stage writes and another reads. */
export const ATTRS = {
  sessionId: 'session.id',
  promptId: 'prompt.id',
  toolUseId: 'tool_use_id',
  toolName: 'gen_ai.tool.name',
  requestModel: 'gen_ai.request.model',
  toolResponseLength: 'ccotel.tool.response.length',
  agentId: 'ccotel.agent.id',
  /** The agent (claude-code, codex): on turn spans, and on every metric point of a session (DESIGN §4, §12). */
  agentName: 'gen_ai.agent.name',
  permissionMode: 'ccotel.permission.mode',
  startOrigin: 'ccotel.start.origin',
  blockOrigin: 'ccotel.block.origin',
  /** Attribution (DESIGN §11), on every span and log record of a session: the project directory, its repository, the branch, the ticket. */
  cwd: 'ccotel.cwd',
  repository: 'vcs.repository.url.full',
  branch: 'vcs.ref.head.name',
  ticket: 'ccotel.ticket',
} as const;

/** The attributes every span of a session carries, whichever stage makes it. */

export function commonAttributes(sessionId: string, operation: string): Attributes {
  return { [ATTRS.sessionId]: sessionId, 'gen_ai.conversation.id': sessionId, 'gen_ai.operation.name': operation };
}

/** Keys the sinks add to carry an item's deterministic id on the wire (ClickHouse rows and OTLP alike). */
export const RECORD_ID_KEY = 'ccotel.record.id';
/** Metric attribute carrying nothing but the point's id, inside the exemplar, so repeats can be recognised. */
export const POINT_ID_KEY = 'ccotel.point.id';
/** Instrumentation scope of everything the sidecar emits. */
export const SCOPE_NAME = 'ccotel';
/** Explicit bounds of ccotel's histograms, the same in the store and over OTLP. Seconds: tool calls range from milliseconds to many minutes. */
export const HISTOGRAM_BOUNDS = [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600, 1800];

const BOUNDS_BY_NAME = new Map<string, readonly number[]>(
  Object.values(METRICS as Record<string, MetricDefinition>).flatMap((metric) => (metric.bounds ? [[metric.name, metric.bounds] as const] : [])),
);

/** The explicit bounds of a histogram metric (by name), the same in the store and over OTLP, so its points merge. */
export function histogramBounds(name: string): readonly number[] {
  return BOUNDS_BY_NAME.get(name) ?? HISTOGRAM_BOUNDS;
}

/** The version of the OpenTelemetry semantic conventions the names follow (gen_ai.provider.name: 1.37). */
export const SCHEMA_URL = 'https://opentelemetry.io/schemas/1.37.0';

export interface PointFields {
  id: string;
  timeMs: number;
  /** 1 when not given: most points count one event. */
  value?: number;
  attributes: Attributes;
  traceId?: string;
  spanId?: string;
}

/** A point of `metric`; a point outside any trace leaves the context empty. */
export function metricPoint(metric: MetricDefinition, fields: PointFields): MetricPoint {
  const { name, unit, description, kind } = metric;
  return { id: fields.id, name, unit, description, kind, timeMs: fields.timeMs, value: fields.value ?? 1, attributes: fields.attributes, traceId: fields.traceId ?? '', spanId: fields.spanId ?? '' };
}

// ---- ids: a log record and a metric point of the same fact share a seed; each is `recordIdOf(its name, seed)` --

export function logIdOf(eventName: string, seed: string): string {
  return recordIdOf(eventName, seed);
}

export function pointIdOf(metric: MetricDefinition, seed: string): string {
  return recordIdOf(metric.name, seed);
}

/** The `ccotel.hook.*` record of the hook event of spool file `spoolFile`. */
export function hookRecordId(spoolFile: string): string {
  return recordIdOf('hook', spoolFile);
}

/** The `execute_tool` span of a tool call. */
export function toolSpanId(toolUseId: string): string {
  return spanIdOf('tool', toolUseId);
}

/** Seed of the session start at the prompt `messageUuid`: the transcript infers it, a SessionStart hook before that prompt confirms it. */
export function sessionStartSeed(sessionId: string, messageUuid: string): string {
  return recordIdOf('session-start', sessionId, messageUuid);
}

/** Seed of a session start only a hook saw (no prompt followed it). */
export function hookSessionStartSeed(sessionId: string, firedAtNs: string): string {
  return recordIdOf('session-start', sessionId, 'hook', firedAtNs);
}

/** Seed of a session end told by the SessionEnd hook of spool file `spoolFile`. */
export function hookSessionEndSeed(sessionId: string, spoolFile: string): string {
  return recordIdOf('session-end', sessionId, spoolFile);
}

/** Seed of the end of a session found abandoned by the detection `detectionId`. */
export function abandonedSessionEndSeed(sessionId: string, detectionId: string): string {
  return recordIdOf('session-end', sessionId, 'abandoned', detectionId);
}

/** Seed of the permission block of a tool call: the transcript and the hooks block a call at most once. */
export function permissionBlockSeed(toolSpanIdOfCall: string): string {
  return `${toolSpanIdOfCall}:blocked`;
}
