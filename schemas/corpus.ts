/**
 * Test corpus: sessions described as plain specs, turned into otel_traces / otel_logs rows shaped the way
 * DESIGN.md says the sidecar emits them (span names, attributes, event names), with the at-least-once
 * repeats a crash-and-reread produces. Tests compute their expected figures from the specs, never from
 * the database, so a wrong query cannot agree with itself.
 *
 * Used until the sidecar pipeline can backfill a generated transcript corpus into the same tables.
 */
import { createHash } from 'node:crypto';
import type { ClickHouseClient } from '@clickhouse/client';
import { priceChat } from '../sidecar/src/processors/price-chats.js';
import { DEFAULT_AGENT, turnSpanName, type AgentName } from '../sidecar/src/semconv.js';
import { OTEL_TABLES, ident } from './clickhouse.js';
import { UNCACHED_INPUT_ATTRIBUTE } from './usage.js';

export interface ChatSpec {
  model: string;
  input: number;
  output: number;
  cacheRead: number;
  cacheCreation: number;
}

/** What the sidecar's pricing puts on the chat span (`ccotel.cost.usd`). */
export function chatCost(chat: ChatSpec): number {
  return priceChat(chat.model, { ...chat, cacheCreation1h: 0 }, 0).usd;
}

export interface ToolSpec {
  name: string;
  outcome: 'success' | 'error' | 'denied' | 'interrupted' | 'unanswered';
  /** For Bash: the command; produces a `shell {program}` span and a `ccotel.shell.command` record. */
  command?: string;
  /** Emits `ccotel.permission.blocked` with this source. */
  blockedBy?: 'hook' | 'rule' | 'user';
  durationMs: number;
}

export interface TurnSpec {
  /** Offset from the session start. */
  atMs: number;
  durationMs: number;
  outcome: 'completed' | 'interrupted' | 'error' | 'abandoned';
  chats: ChatSpec[];
  tools: ToolSpec[];
}

export interface SessionSpec {
  id: string;
  host: string;
  user: string;
  project: string;
  /** Attribution (DESIGN §11) on every span and record: `vcs.repository.url.full`, `vcs.ref.head.name`; the resource's `team`. */
  repo?: string;
  branch?: string;
  team?: string;
  /** The agent whose session it is (default claude-code): its turns' `gen_ai.agent.name`. */
  agent?: AgentName;
  startMs: number;
  /** Sources of `ccotel.session.started` records after the first (startup) one, e.g. ['resume']. */
  restarts: Array<{ atMs: number; source: 'resume' | 'clear' | 'compact' | 'fork' }>;
  turns: TurnSpec[];
  /** `cause` and `detail` (the record's body) as a detector tells them, when it does. */
  failureModes: Array<{ atMs: number; mode: string; cause?: string; detail?: string }>;
  /** `ccotel.session.ended` reason, undefined while the session is open. */
  end?: { atMs: number; reason: string };
  /** Other records a SIEM rule reads, attached to the session (e.g. ccotel.secret.detected). */
  extraLogs?: Array<{ atMs: number; eventName: string; severity: string; attributes: Record<string, string>; body?: string }>;
}

export interface CorpusRows {
  traces: Record<string, unknown>[];
  logs: Record<string, unknown>[];
}

const hex = (input: string, length: number): string => createHash('sha256').update(input).digest('hex').slice(0, length);

/** `YYYY-MM-DD HH:MM:SS.mmm000000` in UTC, the text form DateTime64(9) accepts. */
export function chTime(ms: number): string {
  return `${new Date(ms).toISOString().slice(0, 23).replace('T', ' ')}000000`;
}

const SEVERITY_NUMBER: Record<string, number> = { DEBUG: 5, INFO: 9, WARN: 13, ERROR: 17 };

export function sessionRows(spec: SessionSpec): CorpusRows {
  const resource = { 'service.name': 'ccotel', 'host.name': spec.host, 'user.name': spec.user, ...(spec.team ? { team: spec.team } : {}) };
  const traces: Record<string, unknown>[] = [];
  const logs: Record<string, unknown>[] = [];
  const place = { ...(spec.repo ? { 'vcs.repository.url.full': spec.repo } : {}), ...(spec.branch ? { 'vcs.ref.head.name': spec.branch } : {}) };
  const common = { 'session.id': spec.id, 'gen_ai.conversation.id': spec.id, ...place };

  const span = (traceId: string, spanId: string, parent: string, name: string, startMs: number, durationMs: number,
    operation: string, attributes: Record<string, string>, error = false) =>
    traces.push({
      Timestamp: chTime(startMs), TraceId: traceId, SpanId: spanId, ParentSpanId: parent, SpanName: name,
      SpanKind: 'SPAN_KIND_INTERNAL', ServiceName: 'ccotel', ResourceAttributes: resource, ScopeName: 'ccotel',
      SpanAttributes: { ...common, 'gen_ai.operation.name': operation, ...attributes },
      Duration: durationMs * 1_000_000, StatusCode: error ? 'STATUS_CODE_ERROR' : 'STATUS_CODE_UNSET',
    });
  const log = (atMs: number, eventName: string, severity: string, attributes: Record<string, string>,
    traceId = '', spanId = '', body = '') =>
    logs.push({
      Timestamp: chTime(atMs), TraceId: traceId, SpanId: spanId, SeverityText: severity,
      SeverityNumber: SEVERITY_NUMBER[severity] ?? 9, ServiceName: 'ccotel', Body: body, ResourceAttributes: resource,
      ScopeName: 'ccotel', EventName: eventName,
      LogAttributes: { ...place, ...attributes, 'session.id': spec.id, 'ccotel.record.id': hex(`${spec.id}:${eventName}:${atMs}:${logs.length}`, 24) },
    });

  log(spec.startMs, 'ccotel.session.started', 'INFO', { source: 'startup' });
  for (const restart of spec.restarts) log(spec.startMs + restart.atMs, 'ccotel.session.started', 'INFO', { source: restart.source });

  spec.turns.forEach((turn, t) => {
    const start = spec.startMs + turn.atMs;
    const traceId = hex(`${spec.id}:turn:${t}`, 32);
    const root = hex(`${traceId}:root`, 16);
    const agent = spec.agent ?? DEFAULT_AGENT;
    span(traceId, root, '', turnSpanName(agent), start, turn.durationMs, 'invoke_agent', {
      'gen_ai.agent.name': agent, 'ccotel.turn.outcome': turn.outcome, 'ccotel.cwd': spec.project,
      'message.uuid': hex(`${traceId}:prompt`, 32),
    }, turn.outcome === 'error');
    turn.chats.forEach((chat, c) =>
      span(traceId, hex(`${traceId}:chat:${c}`, 16), root, `chat ${chat.model}`, start + 10 + c, 5, 'chat', {
        'gen_ai.request.model': chat.model, 'gen_ai.response.id': `msg_${hex(`${traceId}${c}`, 12)}`,
        'gen_ai.usage.input_tokens': String(chat.input + chat.cacheRead + chat.cacheCreation), [UNCACHED_INPUT_ATTRIBUTE]: String(chat.input),
        'gen_ai.usage.output_tokens': String(chat.output),
        'gen_ai.usage.cache_read.input_tokens': String(chat.cacheRead),
        'gen_ai.usage.cache_creation.input_tokens': String(chat.cacheCreation),
        'ccotel.cost.usd': String(chatCost(chat)),
      }));
    turn.tools.forEach((tool, k) => {
      const toolUseId = `toolu_${hex(`${traceId}:tool:${k}`, 20)}`;
      const spanId = hex(toolUseId, 16);
      const toolStart = start + 20 + k * 2;
      span(traceId, spanId, root, `execute_tool ${tool.name}`, toolStart, tool.durationMs, 'execute_tool', {
        'gen_ai.tool.name': tool.name, 'gen_ai.tool.call.id': toolUseId, tool_use_id: toolUseId,
        'ccotel.tool.outcome': tool.outcome,
      }, tool.outcome === 'error');
      if (tool.blockedBy) {
        log(toolStart + 1, 'ccotel.permission.blocked', 'WARN',
          { 'gen_ai.tool.name': tool.name, tool_use_id: toolUseId, source: tool.blockedBy }, traceId, spanId);
      }
      if (tool.command !== undefined) {
        const program = tool.command.trim().split(/\s+/)[0] ?? '';
        const shellSpan = hex(`${toolUseId}:shell`, 16);
        span(traceId, shellSpan, spanId, `shell ${program}`, toolStart + 1, Math.max(1, tool.durationMs - 1), 'execute_tool', {
          'process.pid': '4242', 'process.command_line': tool.command, 'process.exit.code': tool.outcome === 'error' ? '1' : '0',
        });
        log(toolStart + 1, 'ccotel.shell.command', 'INFO',
          { 'process.command_line': tool.command, 'process.pid': '4242', cwd: spec.project }, traceId, shellSpan, tool.command);
      }
    });
  });
  for (const failure of spec.failureModes) {
    log(spec.startMs + failure.atMs, 'ccotel.failure_mode.detected', 'WARN', { mode: failure.mode, ...(failure.cause ? { cause: failure.cause } : {}) }, '', '', failure.detail);
  }
  for (const extra of spec.extraLogs ?? []) {
    log(spec.startMs + extra.atMs, extra.eventName, extra.severity, extra.attributes, '', '', extra.body ?? '');
  }
  if (spec.end) log(spec.startMs + spec.end.atMs, 'ccotel.session.ended', 'INFO', { reason: spec.end.reason });
  return { traces, logs };
}

/** Rows for all sessions, with every third span and every fourth log record written twice (at-least-once). */
export function corpusRows(specs: SessionSpec[]): CorpusRows {
  const all = specs.map(sessionRows);
  const traces = all.flatMap((r) => r.traces);
  const logs = all.flatMap((r) => r.logs);
  return {
    traces: [...traces, ...traces.filter((_, i) => i % 3 === 0)],
    logs: [...logs, ...logs.filter((_, i) => i % 4 === 0)],
  };
}

export async function insertCorpus(client: ClickHouseClient, database: string, rows: CorpusRows): Promise<void> {
  const table = (name: string) => `${ident(database)}.${ident(name)}`;
  if (rows.traces.length) await client.insert({ table: table(OTEL_TABLES.traces), values: rows.traces, format: 'JSONEachRow' });
  if (rows.logs.length) await client.insert({ table: table(OTEL_TABLES.logs), values: rows.logs, format: 'JSONEachRow' });
}

/** Figures a session summary must show, computed from the spec alone. */
export function expectedSummary(spec: SessionSpec) {
  const tools = spec.turns.flatMap((t) => t.tools);
  const chats = spec.turns.flatMap((t) => t.chats);
  const countBy = <T>(items: T[], key: (item: T) => string) =>
    items.reduce<Record<string, number>>((acc, item) => ({ ...acc, [key(item)]: (acc[key(item)] ?? 0) + 1 }), {});
  const tokens = (field: keyof Omit<ChatSpec, 'model'>) =>
    chats.reduce<Record<string, number>>((acc, c) => ({ ...acc, [c.model]: (acc[c.model] ?? 0) + c[field] }), {});
  return {
    SessionId: spec.id,
    Host: spec.host,
    User: spec.user,
    Project: spec.project,
    Repository: spec.repo ?? '',
    Branch: spec.branch ?? '',
    Turns: spec.turns.length,
    TurnOutcomes: countBy(spec.turns, (t) => t.outcome),
    ToolCalls: tools.length,
    ToolOutcomes: countBy(tools, (t) => t.outcome),
    PermissionBlocks: tools.filter((t) => t.blockedBy).length,
    Starts: 1 + spec.restarts.length,
    Resumes: spec.restarts.filter((r) => r.source === 'resume').length,
    InputTokens: tokens('input'),
    OutputTokens: tokens('output'),
    CacheReadTokens: tokens('cacheRead'),
    CacheCreationTokens: tokens('cacheCreation'),
    FailureModes: countBy(spec.failureModes, (f) => f.mode),
    EndReason: spec.end?.reason ?? '',
    State: spec.end ? (spec.end.reason === 'abandoned' ? 'abandoned' : 'ended') : 'open',
  };
}

/** A small deterministic PRNG (mulberry32) so generated corpora are the same on every run. */
export function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const MODELS = ['claude-opus-4-5', 'claude-sonnet-4-5', 'claude-haiku-4-5'];
const TOOLS = ['Bash', 'Read', 'Edit', 'Grep', 'Write'];
const TOOL_OUTCOMES: ToolSpec['outcome'][] = ['success', 'success', 'success', 'error', 'denied', 'interrupted'];
const TURN_OUTCOMES: TurnSpec['outcome'][] = ['completed', 'completed', 'completed', 'interrupted', 'error'];
const COMMANDS = ['ls -la', 'npm test', 'git status', 'cat README.md', 'grep -r TODO src'];

/** `count` sessions spread over `spanDays` days ending at `endMs`, all features exercised. */
export function generateSessions(count: number, endMs: number, spanDays: number, seed = 7): SessionSpec[] {
  const random = prng(seed);
  const pick = <T>(items: T[]): T => items[Math.floor(random() * items.length)];
  return Array.from({ length: count }, (_, s): SessionSpec => {
    const startMs = endMs - Math.floor(random() * spanDays * 86_400_000) - 3_600_000;
    const turns: TurnSpec[] = Array.from({ length: 1 + Math.floor(random() * 4) }, (_, t) => ({
      atMs: 60_000 * (t + 1),
      durationMs: 5_000 + Math.floor(random() * 20_000),
      outcome: pick(TURN_OUTCOMES),
      chats: Array.from({ length: 1 + Math.floor(random() * 2) }, () => ({
        model: pick(MODELS),
        input: 100 + Math.floor(random() * 900),
        output: 50 + Math.floor(random() * 500),
        cacheRead: Math.floor(random() * 3000),
        cacheCreation: Math.floor(random() * 400),
      })),
      tools: Array.from({ length: Math.floor(random() * 4) }, () => {
        const name = pick(TOOLS);
        const outcome = pick(TOOL_OUTCOMES);
        return {
          name,
          outcome,
          durationMs: 100 + Math.floor(random() * 3000),
          ...(name === 'Bash' ? { command: pick(COMMANDS) } : {}),
          ...(outcome === 'denied' ? { blockedBy: pick(['hook', 'rule', 'user'] as const) } : {}),
        };
      }),
    }));
    const ended = random();
    return {
      id: `sess-${seed}-${s}`,
      host: `host-${s % 3}`,
      user: `user-${s % 4}`,
      project: `/work/project-${s % 5}`,
      // Not drawn from `random`: the figures of the corpora made before these fields stay the same.
      ...(s % 5 === 4 ? {} : { repo: `https://git.example.com/acme/project-${s % 5}` }),
      branch: ['main', 'feature/PAY-1', 'main'][s % 3],
      team: `team-${s % 2}`,
      startMs,
      restarts: random() < 0.4 ? [{ atMs: 30 * 60_000, source: 'resume' }] : [],
      turns,
      failureModes: random() < 0.3 ? [{ atMs: 40 * 60_000, mode: pick(['orphan_process', 'approval_scope', 'output_truncation']) }] : [],
      ...(ended < 0.5 ? { end: { atMs: 50 * 60_000, reason: 'prompt_input_exit' } } : ended < 0.7 ? { end: { atMs: 50 * 60_000, reason: 'abandoned' } } : {}),
    };
  });
}

/** Sidecar self-metrics for one host at one time (DESIGN §4 `ccotel.sidecar.*`). */
export interface HealthSpec {
  host: string;
  atMs: number;
  lagBytes: number;
  unusable: Array<{ source: string; result: string; count: number }>;
  exportFailures: number;
}

/** Metric rows in the sidecar sink's shape (point id in the exemplar), each sum point written twice. */
export function healthRows(specs: HealthSpec[]): { sum: Record<string, unknown>[]; gauge: Record<string, unknown>[] } {
  const sum: Record<string, unknown>[] = [];
  const gauge: Record<string, unknown>[] = [];
  const base = (h: HealthSpec, name: string, unit: string, attributes: Record<string, string>, value: number, id: string) => ({
    ResourceAttributes: { 'service.name': 'ccotel', 'host.name': h.host }, ServiceName: 'ccotel', ScopeName: 'ccotel',
    MetricName: name, MetricUnit: unit, Attributes: attributes,
    StartTimeUnix: chTime(Math.floor(h.atMs / 60_000) * 60_000).slice(0, 19),
    TimeUnix: chTime(Math.floor(h.atMs / 60_000) * 60_000 + 60_000).slice(0, 19),
    Value: value, 'Exemplars.FilteredAttributes': [{ 'ccotel.point.id': id }], 'Exemplars.TimeUnix': [chTime(h.atMs).slice(0, 19)],
    'Exemplars.Value': [value], 'Exemplars.SpanId': [''], 'Exemplars.TraceId': [''],
  });
  for (const h of specs) {
    gauge.push(base(h, 'ccotel.sidecar.lag', 'By', { source: 'transcript' }, h.lagBytes, hex(`${h.host}:${h.atMs}:lag`, 24)));
    h.unusable.forEach((u, i) => {
      for (let n = 0; n < u.count; n++) {
        const row = { ...base(h, 'ccotel.sidecar.records', '{record}', { source: u.source, result: u.result }, 1,
          hex(`${h.host}:${h.atMs}:rec:${i}:${n}`, 24)), AggregationTemporality: 1, IsMonotonic: true };
        sum.push(row, row);
      }
    });
    if (h.exportFailures > 0) {
      const row = { ...base(h, 'ccotel.sidecar.export.failures', '{failure}', { sink: 'otlp' }, h.exportFailures,
        hex(`${h.host}:${h.atMs}:fail`, 24)), AggregationTemporality: 1, IsMonotonic: true };
      sum.push(row, row);
    }
  }
  return { sum, gauge };
}

export async function insertHealth(client: ClickHouseClient, database: string, rows: ReturnType<typeof healthRows>): Promise<void> {
  if (rows.sum.length) await client.insert({ table: `${ident(database)}.${ident(OTEL_TABLES.sum)}`, values: rows.sum, format: 'JSONEachRow' });
  if (rows.gauge.length) await client.insert({ table: `${ident(database)}.${ident(OTEL_TABLES.gauge)}`, values: rows.gauge, format: 'JSONEachRow' });
}
