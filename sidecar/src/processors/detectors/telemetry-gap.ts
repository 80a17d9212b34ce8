// The failure mode `telemetry_gap` (DESIGN §6): a session whose agent exported its own telemetry, where that
// telemetry disagrees with the transcript — requests of the transcript no exported request names (Claude Code's
// `api_request`, Codex's `response.completed`, as their dialects read them: the export stopped, from the first such
// request), requests exported twice (a duplicated exporter), exported requests the transcript lacks, a model named
// otherwise, token totals (Claude Code's `claude_code.token.usage`) that differ.
// `telemetryGaps` compares the two sides; `ccotel report telemetry` gives it what the store holds, and
// `TelemetryGapDetector` what flows through `run`'s pipeline, telling each gap as a failure-mode record once the
// session has been quiet long enough for both exporters to have sent what they had.
// Auxiliary requests (query_source auxiliary: titles, compaction summaries) have no transcript row and are left out.
import { UNCACHED_INPUT_ATTRIBUTE } from '../../../../schemas/usage.js';
import { recordIdOf } from '../../ids.js';
import { type Attributes, type LogRecord, type MetricPoint, type Processor, type SpanRecord, type TelemetryBatch } from '../../model.js';
import type { FailureDetected } from '../../events.js';
import { ATTRS, EVENTS, type AgentName } from '../../semconv.js';
import { readNative, type NativeDialect } from '../../records/native-telemetry.js';
import { encode } from '../encode/index.js';

export const TOKEN_TYPES = ['input', 'output', 'cacheRead', 'cacheCreation'] as const;
export type TokenType = (typeof TOKEN_TYPES)[number];
export type Tokens = Record<TokenType, number>;
export const zeroTokens = (): Tokens => ({ input: 0, output: 0, cacheRead: 0, cacheCreation: 0 });

/** A request of the transcript (ccotel's chat span). */
export interface ChatFacts {
  request: string;
  model: string;
  timeMs: number;
  tokens: Tokens;
  costUsd: number;
}

/** What Claude Code exported for a session. */
export interface NativeFacts {
  /** Its api_request events by request id: the model named, and how many distinct records named it. */
  requests: Map<string, { model: string; records: number }>;
  /** Sums of its token and cost points (undefined: none exported). */
  tokens?: Tokens;
  costUsd?: number;
}

export type GapKind = 'not_exported' | 'exported_twice' | 'not_in_transcript' | 'model_renamed' | 'tokens_differ' | 'no_cost';

export interface Gap {
  kind: GapKind;
  /** What differs, in words. */
  text: string;
}

export interface GapFindings {
  gaps: Gap[];
  /** The time of the first request of the transcript no native event names: the export stopped there. */
  missingFromMs?: number;
}

/** Where the transcript (`chats`, in time order) and Claude Code's own telemetry of one session disagree. */
export function telemetryGaps(chats: readonly ChatFacts[], native: NativeFacts): GapFindings {
  const gaps: Gap[] = [];
  const missing = chats.filter((chat) => chat.request && !native.requests.has(chat.request));
  if (missing.length > 0) gaps.push({ kind: 'not_exported', text: `${missing.length} of ${chats.length} requests of the transcript not exported` });
  const twice = [...native.requests.values()].filter((exported) => exported.records > 1).length;
  if (twice > 0) gaps.push({ kind: 'exported_twice', text: `${twice} requests exported more than once` });
  const known = new Set(chats.map((chat) => chat.request));
  const extra = [...native.requests.keys()].filter((request) => !known.has(request));
  if (extra.length > 0) gaps.push({ kind: 'not_in_transcript', text: `${extra.length} exported requests not in the transcript` });
  const renamed = new Set(chats.filter((chat) => native.requests.has(chat.request) && native.requests.get(chat.request)!.model !== chat.model).map((chat) => `${chat.model} exported as ${native.requests.get(chat.request)!.model}`));
  for (const rename of renamed) gaps.push({ kind: 'model_renamed', text: `model ${rename}` });
  if (native.tokens) {
    const ours = tokensOf(chats);
    for (const type of TOKEN_TYPES) {
      if (native.tokens[type] !== ours[type]) gaps.push({ kind: 'tokens_differ', text: `${type} tokens: ${ours[type]} in the transcript, ${native.tokens[type]} exported` });
    }
    if (costOf(chats) > 0 && !native.costUsd) gaps.push({ kind: 'no_cost', text: 'no exported cost' });
  }
  return { gaps, ...(missing.length > 0 ? { missingFromMs: missing[0].timeMs } : {}) };
}

export function tokensOf(chats: readonly ChatFacts[]): Tokens {
  const tokens = zeroTokens();
  for (const chat of chats) for (const type of TOKEN_TYPES) tokens[type] += chat.tokens[type];
  return tokens;
}

export const costOf = (chats: readonly ChatFacts[]) => roundUsd(chats.reduce((total, chat) => total + chat.costUsd, 0));
export const roundUsd = (usd: number) => Math.round(usd * 1e6) / 1e6;

const NATIVE_SERVICE = 'claude-code';
const TOKEN_METRIC = 'claude_code.token.usage';
const COST_METRIC = 'claude_code.cost.usage';
/** OTLP's AGGREGATION_TEMPORALITY_DELTA (Claude Code's default): only delta points add up to a total. */
const DELTA = 1;
/** Claude Code exports metrics every 60 s by default (logs every 5 s): a session quiet this long has sent what it had. */
export const GAP_SETTLE_MS = 150_000;
/** Sessions followed at once; the least recently active go first. */
const MAX_SESSIONS = 2_000;

interface SessionSides {
  chats: Map<string, ChatFacts>;
  requests: Map<string, { model: string; records: Set<string> }>;
  tokens: Tokens;
  costUsd: number;
  tokenPoints: boolean;
  costPoints: boolean;
  pointIds: Set<string>;
  /** Anything Claude Code exported for it seen (a session it exported nothing for is not checked). */
  native: boolean;
  /** The agent whose telemetry its requests are (none seen: Claude Code, whose metric points alone may tell it). */
  agent?: AgentName;
  /** Its start (ccotel.session.started) came while following: both sides of it are seen whole. */
  started: boolean;
  /** Wall-clock time a record of it last came. */
  lastSeenMs: number;
  /** The id of the gaps last told (kept with the session, so forgotten with it: bounded by MAX_SESSIONS). */
  toldId?: string;
}

const text = (attributes: Attributes, key: string) => {
  const value = attributes[key];
  return typeof value === 'string' ? value : '';
};
const count = (attributes: Attributes, key: string) => Number(attributes[key] ?? 0) || 0;

/**
 * Follows both sides of the sessions that start (`ccotel.session.started`, a resume too) while it runs: one begun
 * before, or before a restart of `run`, may have been read or exported in part and would show gaps that are not
 * there. Tells a session's gaps (`check`) once it has been quiet for `settleMs`; again only when what differs
 * changes in kind or start.
 */
export class TelemetryGapDetector implements Processor {
  readonly name = 'telemetry-gap';
  private readonly sessions = new Map<string, SessionSides>();

  constructor(
    /** Each agent's own events, read as what they tell (one set per reader). */
    private readonly dialects: readonly NativeDialect[],
    /** Sessions started before this (record time) are not followed. */
    private readonly sinceMs: number,
    private readonly settleMs = GAP_SETTLE_MS,
    private readonly now: () => number = Date.now,
  ) {}

  async process(batch: TelemetryBatch): Promise<TelemetryBatch> {
    for (const span of batch.spans) if (!span.origin && span.name.startsWith('chat ')) this.noteChat(span);
    for (const log of batch.logs) {
      if (log.origin) this.noteApiRequest(log);
      else if (log.eventName === EVENTS.sessionStarted) this.noteStart(log);
    }
    for (const point of batch.metrics) if (point.origin && point.origin.resource['service.name'] === NATIVE_SERVICE) this.notePoint(point);
    return batch;
  }

  /** The records (a point and a log record each) of the gaps of the sessions quiet for `settleMs`. */
  check(): TelemetryBatch {
    const told: FailureDetected[] = [];
    const now = this.now();
    for (const [sessionId, sides] of this.sessions) {
      if (now - sides.lastSeenMs < this.settleMs) continue;
      if (!sides.native || !sides.started) {
        this.sessions.delete(sessionId); // nothing to compare (no telemetry of its own), or not seen whole
        continue;
      }
      const chats = [...sides.chats.values()].sort((a, b) => a.timeMs - b.timeMs);
      const native: NativeFacts = { requests: new Map([...sides.requests].map(([request, seen]) => [request, { model: seen.model, records: seen.records.size }])) };
      if (sides.tokenPoints) native.tokens = { ...sides.tokens };
      if (sides.costPoints) native.costUsd = roundUsd(sides.costUsd);
      const { gaps, missingFromMs } = telemetryGaps(chats, native);
      if (gaps.length === 0) continue;
      const kinds = [...new Set(gaps.map((gap) => gap.kind))];
      const id = recordIdOf('failure-mode', 'telemetry_gap', sessionId, kinds.join(','), String(missingFromMs ?? ''));
      if (sides.toldId === id) continue;
      sides.toldId = id;
      const from = missingFromMs === undefined ? '' : ` (from ${new Date(missingFromMs).toISOString()})`;
      const detail = `${gaps.map((gap) => gap.text).join('; ')}${from}`;
      const timeMs = missingFromMs ?? chats.at(-1)?.timeMs ?? now;
      told.push({ kind: 'FailureDetected', id, mode: 'telemetry_gap', sessionId, agent: sides.agent, timeMs, cause: kinds.join(','), detail, traceId: '', spanId: '' });
    }
    return encode(told);
  }

  /** The session's sides, for a record of it made since `sinceMs` (an older one is of what came before). */
  private sides(sessionId: string, recordMs: number): SessionSides | undefined {
    if (sessionId === '' || recordMs < this.sinceMs) return undefined;
    let sides = this.sessions.get(sessionId);
    if (!sides) {
      sides = { chats: new Map(), requests: new Map(), tokens: zeroTokens(), costUsd: 0, tokenPoints: false, costPoints: false, pointIds: new Set(), native: false, started: false, lastSeenMs: 0 };
      if (this.sessions.size >= MAX_SESSIONS) this.sessions.delete(this.sessions.keys().next().value!);
    }
    this.sessions.delete(sessionId);
    this.sessions.set(sessionId, sides); // most recently active last
    sides.lastSeenMs = this.now();
    return sides;
  }

  private noteStart(log: LogRecord): void {
    const sides = this.sides(text(log.attributes, ATTRS.sessionId), log.timeMs);
    if (sides) sides.started = true;
  }

  private noteChat(span: SpanRecord): void {
    const a = span.attributes;
    const sides = this.sides(text(a, ATTRS.sessionId), span.startMs);
    const request = text(a, 'request_id');
    if (!sides || !request) return;
    const tokens = { input: count(a, UNCACHED_INPUT_ATTRIBUTE), output: count(a, 'gen_ai.usage.output_tokens'), cacheRead: count(a, 'gen_ai.usage.cache_read.input_tokens'), cacheCreation: count(a, 'gen_ai.usage.cache_creation.input_tokens') };
    sides.chats.set(request, { request, model: text(a, 'gen_ai.request.model'), timeMs: span.startMs, tokens, costUsd: count(a, 'ccotel.cost.usd') });
  }

  /** A model request the agent exported (its dialect reads it: sources/native-telemetry.ts). */
  private noteApiRequest(log: LogRecord): void {
    const fact = readNative(this.dialects, log);
    if (fact?.kind !== 'chat' || fact.auxiliary) return;
    const sides = this.sides(fact.sessionId, log.timeMs);
    const request = fact.key;
    if (!sides) return;
    sides.native = true;
    sides.agent = fact.agent;
    const seen = sides.requests.get(request) ?? { model: fact.model, records: new Set<string>() };
    seen.records.add(log.id); // a resent export has the same id: stored once, counted once
    sides.requests.set(request, seen);
  }

  private notePoint(point: MetricPoint): void {
    const a = point.attributes;
    if ((point.name !== TOKEN_METRIC && point.name !== COST_METRIC) || a.query_source === 'auxiliary') return;
    const sides = this.sides(text(a, ATTRS.sessionId), point.timeMs);
    if (!sides) return;
    sides.native = true;
    if (point.origin?.temporality !== DELTA || sides.pointIds.has(point.id)) return;
    sides.pointIds.add(point.id);
    if (point.name === COST_METRIC) {
      sides.costPoints = true;
      sides.costUsd += point.value;
      return;
    }
    const type = text(a, 'type');
    if (!(TOKEN_TYPES as readonly string[]).includes(type)) return;
    sides.tokenPoints = true;
    sides.tokens[type as TokenType] += point.value;
  }
}
