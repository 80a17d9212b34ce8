// The version matrix: real samples of every recorded Claude Code release (test/fixtures/real/<version>/, and the
// pinned release's test/fixtures/real/<scenario>/) → one backfill → the store must hold exactly what each
// scenario's script implies (expectations.json) and what the CLI itself reported (results/*.json).
import { mkdtempSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { backfill } from '../../sidecar/src/commands/backfill.js';
import { openStore, type Store } from '../../sidecar/src/store/open-store.js';
import { knownGap, type CheckName } from './version-matrix-gaps.js';
import { asAutoModeDecided, cliUsageIsExact, matrixSamples, type MatrixSample } from './version-matrix-samples.js';
import { storedLogs, storedSpans, type StoredLog, type StoredSpan } from './store-scan.js';

const FIXTURES = join(import.meta.dirname, '..', 'fixtures', 'real');
const samples = matrixSamples(FIXTURES);

let store: Store;
let spans: StoredSpan[];
let logs: StoredLog[];
const storeDir = mkdtempSync(join(tmpdir(), 'ccotel-matrix-'));

beforeAll(async () => {
  process.env.HOME = mkdtempSync(join(tmpdir(), 'ccotel-home-'));
  process.env.CLAUDE_CONFIG_DIR = samples.map((sample) => sample.dir).join(',');
  process.env.CCOTEL_RAW_TTL_DAYS = '0';
  await backfill({ store: storeDir });
  store = await openStore(storeDir, { command: 'test', access: 'read' });
  [spans, logs] = await Promise.all([storedSpans(store.client), storedLogs(store.client)]);
}, 300_000);

afterAll(async () => {
  await store?.close();
});

const TURN = 'invoke_agent claude-code';
const isChat = (span: StoredSpan) => span.name.startsWith('chat ');
const isTool = (span: StoredSpan) => span.name.startsWith('execute_tool ');
const sum = (values: number[]) => values.reduce((total, n) => total + n, 0);
const sorted = <T>(items: T[]) => items.map((item) => JSON.stringify(item)).sort();

function tokensOf(chats: StoredSpan[]) {
  const total = (key: string) => sum(chats.map((span) => Number(span.attributes[key] ?? 0)));
  return {
    input: total('ccotel.usage.uncached.input_tokens'),
    output: total('gen_ai.usage.output_tokens'),
    cacheRead: total('gen_ai.usage.cache_read.input_tokens'),
    cacheCreation: total('gen_ai.usage.cache_creation.input_tokens'),
  };
}

/** What the store holds for one sample's sessions. */
function stored(sample: MatrixSample) {
  const ids = new Set(sample.sessions.map((session) => session.sessionId));
  const mine = spans.filter((span) => ids.has(span.attributes['session.id']));
  return {
    spans: mine,
    logs: logs.filter((log) => ids.has(log.attributes['session.id'])),
    turns: mine.filter((span) => span.name === TURN),
    chats: mine.filter(isChat),
    tools: mine.filter(isTool),
  };
}

it('finds a sample of every recorded release, and every session the CLI reported', () => {
  const releaseFolders = readdirSync(FIXTURES).filter((name) => /^\d+\.\d+\.\d+$/.test(name));
  expect(releaseFolders.filter((version) => !samples.some((sample) => sample.version === version)), 'releases without a sample').toEqual([]);
  const expected = new Set(samples.flatMap((sample) => sample.sessions.map((session) => session.sessionId)));
  const unreported = new Set(samples.flatMap((sample) => sample.unreportedSessions));
  const found = new Set([...spans.map((span) => span.attributes['session.id']), ...logs.map((log) => log.attributes['session.id'])].filter(Boolean));
  expect([...expected].filter((id) => !found.has(id)), 'sessions the CLI reported that the store lacks').toEqual([]);
  expect([...found].filter((id) => !expected.has(id) && !unreported.has(id)), 'sessions in no sample').toEqual([]);
});

it('gives every chat and tool span the session its rows name (warmups under an id no run reported included)', () => {
  const sessionless = spans.filter((span) => (isChat(span) || isTool(span)) && !span.attributes['session.id']);
  expect(sessionless.map((span) => `${span.name} ${span.attributes['gen_ai.response.id'] ?? span.attributes['gen_ai.tool.call.id'] ?? ''}`)).toEqual([]);
});

describe.each(samples)('Claude Code $version, $scenario', (sample) => {
  const expected = sample.sessions;
  /** A check of this sample; one listed in KNOWN_GAPS must fail (it.fails) until ccotel is fixed. */
  const check = (name: CheckName, title: string, body: () => void) => {
    const gap = knownGap(sample, name);
    (gap ? it.fails : it)(gap ? `${title} [known gap: ${gap}]` : title, body);
  };
  const answered = { input: 0, output: 0, cacheRead: 0, cacheCreation: 0 };
  for (const s of expected) for (const key of Object.keys(answered) as (keyof typeof answered)[]) answered[key] += s.tokens[key];
  const outputFrozen = sample.transcriptOutputTokens < answered.output;
  const isWarmup = (span: StoredSpan) => sample.writtenSideMessages.includes(span.attributes['gen_ai.response.id']);

  check('sessions', 'has its sessions and resumes', () => {
    const { turns, logs: mine } = stored(sample);
    const known = new Set([...turns.map((t) => t.attributes['session.id']), ...mine.map((l) => l.attributes['session.id'])]);
    expect([...known].sort(), 'sessions').toEqual(expected.map((s) => s.sessionId).sort());
    const resumes = mine.filter((l) => l.eventName === 'ccotel.session.started' && l.attributes.source === 'resume');
    expect(resumes.length, 'resume starts').toBe(sum(expected.map((s) => s.resumes)));
  });

  if (sample.unreportedSessions.length > 0) {
    check('warmup-sessions', 'gives the warmups of a resumed run (an id no run reported) a session of their own: chats in no turn, no start', () => {
      const unreported = new Set(sample.unreportedSessions);
      // 2.0.42 answers them under that id; 2.0.77 asks under it and answers under the resumed session's.
      const theirs = spans.filter((span) => unreported.has(span.attributes['session.id']));
      expect(theirs.filter((span) => !isChat(span) || span.parentSpanId !== '').map((span) => span.name), 'anything but a chat in no turn').toEqual([]);
      expect(logs.filter((log) => unreported.has(log.attributes['session.id']) && log.eventName === 'ccotel.session.started'), 'starts').toEqual([]);
    });
  }

  check('turns', 'has its turns with their outcomes and one chat span per model response', () => {
    const { turns, chats } = stored(sample);
    expect(turns.map((t) => t.attributes['ccotel.turn.outcome']).sort(), 'turn outcomes').toEqual(expected.flatMap((s) => s.turns).sort());
    const conversation = chats.filter((span) => !isWarmup(span));
    // Samples of the pinned release were recorded before conversationRequests; none has an auxiliary request.
    expect(conversation.length, 'chat spans of the conversation').toBe(sum(expected.map((s) => s.conversationRequests ?? s.modelRequests)));
    expect(chats.length - conversation.length, 'chat spans of warmups').toBe(sample.writtenSideMessages.length);
  });

  if (outputFrozen) {
    check('tokens', 'has the input tokens answered, and the output tokens the transcripts hold (they never got the final count)', () => {
      expect(tokensOf(stored(sample).chats)).toEqual({ ...answered, output: sample.transcriptOutputTokens });
    });
  } else {
    check('tokens', 'has exactly the tokens the model server answered with', () => {
      expect(tokensOf(stored(sample).chats)).toEqual(answered);
    });
  }

  if (cliUsageIsExact(sample.version) && sample.allRunsReported) {
    check('cli-tokens', "has the main loop's tokens of the CLI's own --output-format json usage", () => {
      const usage = sample.results.map((r) => r.usage);
      const main = stored(sample).chats.filter((span) => !span.attributes['ccotel.agent.id']);
      const cli = {
        input: sum(usage.map((u) => u.input_tokens)),
        output: sum(usage.map((u) => u.output_tokens)),
        cacheRead: sum(usage.map((u) => u.cache_read_input_tokens)),
        cacheCreation: sum(usage.map((u) => u.cache_creation_input_tokens)),
      };
      // Where the transcripts never got the final output count, only the input counts can agree.
      const comparable = ({ output, ...inputs }: typeof cli) => (outputFrozen ? inputs : { output, ...inputs });
      expect(comparable(tokensOf(main))).toEqual(comparable(cli));
    });
  }

  check('tools', 'has every tool call with its outcome, the denials and the subagents', () => {
    const { tools, spans: mine, logs: mineLogs } = stored(sample);
    const calls = tools.map((t) => ({ tool: t.attributes['gen_ai.tool.name'], outcome: t.attributes['ccotel.tool.outcome'], subagent: Boolean(t.attributes['ccotel.agent.id']) }));
    const scripted = expected.flatMap((s) => s.toolCalls);
    const expectedCalls = sample.autoMode ? asAutoModeDecided(scripted, sample.results) : scripted;
    expect(sorted(calls), 'tool calls').toEqual(sorted(expectedCalls));
    const denials = expectedCalls.filter((call) => call.outcome === 'denied').length;
    expect(mineLogs.filter((l) => l.eventName === 'ccotel.permission.blocked').length, 'permission.blocked records').toBe(denials);
    const subagents = mine.filter((span) => span.name.startsWith('invoke_agent ') && span.name !== TURN);
    expect(subagents.length, 'subagent spans').toBe(sum(expected.map((s) => s.subagents)));
  });

  // Releases before 1.0.98 print no permission_denials.
  if (sample.results.some((r) => r.permission_denials)) {
    check('cli-denials', "has the denials of the CLI's own permission_denials", () => {
      const cli = sample.results.flatMap((r) => r.permission_denials ?? []) as { tool_use_id: string }[];
      const blocked = stored(sample).tools.filter((t) => t.attributes['ccotel.tool.outcome'] === 'denied');
      expect(blocked.map((t) => t.attributes['gen_ai.tool.call.id']).sort()).toEqual(cli.map((d) => d.tool_use_id).sort());
    });
  }

  check('under-turn', 'has no chat or tool span outside a turn (but warmups, which come before any prompt)', () => {
    const { spans: mine } = stored(sample);
    const byId = new Map(mine.map((span) => [span.spanId, span]));
    const underTurn = (span: StoredSpan): boolean => {
      for (let at: StoredSpan | undefined = span; at; at = byId.get(at.parentSpanId)) if (at.name === TURN) return true;
      return false;
    };
    const outside = mine.filter((span) => (isChat(span) || isTool(span)) && !isWarmup(span) && !underTurn(span));
    expect(outside.map((span) => `${span.name} ${span.attributes['gen_ai.response.id'] ?? span.attributes['gen_ai.tool.call.id'] ?? ''}`)).toEqual([]);
  });
});
