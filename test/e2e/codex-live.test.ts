// `ccotel run` follows Codex rollouts as Codex writes them — a home that appears after the start, the files written
// row by row in the order of their times (a subagent's thread beside its parent's), a resume appended to its file,
// the sidecar restarted while a turn is open (in the TUI session: after the declined call, before its output) — and
// stores exactly what a backfill of the same files stores. The
// rows' times are moved to now (by one offset): recorded times would be older than the idle time, which closes turns.
import { appendFileSync, mkdirSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { codexFixtures, codexTuiFixtures } from '../harness/codex-fixtures.js';
import { assertBuilt, cliEnv, startRun } from '../reliability/cli.js';
import { storeCli } from './store-cli.js';

const SPANS = `SELECT SpanId, TraceId, ParentSpanId, SpanName, toUnixTimestamp64Nano(Timestamp) AS start, Duration, toString(SpanAttributes) AS attributes
  FROM (SELECT * FROM otel_traces LIMIT 1 BY SpanId) ORDER BY SpanId`;
const LOGS = `SELECT LogAttributes['ccotel.record.id'] AS id, EventName AS event, toUnixTimestamp64Nano(Timestamp) AS time, TraceId, SpanId, toString(LogAttributes) AS attributes
  FROM (SELECT * FROM otel_logs WHERE EventName != 'ccotel.record.skipped' LIMIT 1 BY LogAttributes['ccotel.record.id']) ORDER BY id`;

async function until<T>(what: string, probe: () => Promise<T | undefined>, output: () => string): Promise<T> {
  const started = Date.now();
  for (;;) {
    const found = await probe().catch(() => undefined);
    if (found !== undefined) return found;
    if (Date.now() - started > 90_000) throw new Error(`no ${what} within 90 s:\n${output()}`);
    await new Promise((resolveWait) => setTimeout(resolveWait, 250));
  }
}

/** A folder of recorded rollouts, and the calls and chats they hold (the server's answers). */
interface Sample {
  name: string;
  home: string;
  rollouts: string[];
  calls: number;
  chats: number;
}

const steps = (runs: { steps: { calls?: unknown[] }[] }[]) => runs.flatMap((run) => run.steps);
const SAMPLES: Sample[] = [
  ...codexFixtures().map(({ version, home, rollouts, runs }) => ({ name: `${version} exec`, home, rollouts, calls: steps(runs).flatMap((step) => step.calls ?? []).length, chats: steps(runs).length })),
  // The TUI session: the sidecar is stopped after the declined call, whose verdict waits for the next turn's rows.
  ...codexTuiFixtures().map(({ version, home, rollouts, scenario }) => ({ name: `${version} TUI`, home, rollouts, calls: steps(scenario).flatMap((step) => step.calls ?? []).length, chats: steps(scenario).length })),
];

describe.each(SAMPLES)('ccotel run on Codex $name', (fixture) => {
  it('follows the rollouts as written, across a restart in the middle of a turn, and stores what a backfill stores', async () => {
    assertBuilt();
    const home = mkdtempSync(join(tmpdir(), 'ccotel-codex-live-'));
    const codexHome = join(home, 'codex');
    const env = cliEnv(home, { TZ: 'UTC' });
    const live = storeCli(join(home, 'live'), () => env);
    const runUntil = async (write: () => Promise<number>, stored: (turns: number) => Promise<boolean>) => {
      const run = startRun(['--store', join(home, 'live'), '--codex-home', codexHome], env);
      try {
        await until('start', async () => (run.output().includes('following transcripts') ? true : undefined), run.output);
        const turns = await write();
        await until(`${turns} turns stored`, async () => ((await stored(turns)) ? true : undefined), run.output);
      } finally {
        run.child.kill('SIGINT');
        await run.exited;
      }
    };
    const turnsStored = async (n: number) => {
      const rows = await live.query<{ n: number }>(`SELECT count() AS n FROM (SELECT * FROM otel_traces WHERE SpanName = 'invoke_agent codex' LIMIT 1 BY SpanId)`);
      return rows[0].n >= n;
    };
    const turnEnd = (line: string) => line.includes('"type":"task_complete"') || line.includes('"type":"turn_aborted"');
    const timeOf = (line: string) => Date.parse((JSON.parse(line) as { timestamp: string }).timestamp);
    const newest = Math.max(...fixture.rollouts.flatMap((path) => readFileSync(path, 'utf8').split('\n').filter(Boolean).map(timeOf)));
    const offsetMs = Date.now() - newest;
    const moved = (line: string) => {
      const row = JSON.parse(line) as { timestamp: string };
      return JSON.stringify({ ...row, timestamp: new Date(Date.parse(row.timestamp) + offsetMs).toISOString() });
    };
    // Each file as Codex writes it: its first turn, and of a resumed thread the next turn up to its first call (the
    // run is stopped there, that turn open); then, in a new run, the rest.
    const parts = fixture.rollouts.map((path) => {
      const lines = readFileSync(path, 'utf8').split('\n').filter(Boolean).map(moved);
      const firstEnd = lines.findIndex(turnEnd) + 1;
      const call = lines.findIndex((line, i) => i >= firstEnd && line.includes('"type":"function_call"'));
      const cut = call === -1 ? firstEnd : call + 1;
      return { target: join(codexHome, relative(fixture.home, path)), first: lines.slice(0, cut), rest: lines.slice(cut) };
    });
    // Every file's rows one at a time, in the order of their times (a file's own order where they tie).
    const append = async (pick: (part: (typeof parts)[number]) => string[]) => {
      const rows = parts.flatMap((part) => pick(part).map((line, index) => ({ target: part.target, line, index, timeMs: timeOf(line) })));
      rows.sort((a, b) => a.timeMs - b.timeMs || (a.target === b.target ? a.index - b.index : 0));
      for (const { target, line } of rows) {
        mkdirSync(dirname(target), { recursive: true });
        appendFileSync(target, line + '\n');
        await new Promise((resolveWait) => setTimeout(resolveWait, 5));
      }
      return rows.filter((row) => turnEnd(row.line)).length;
    };
    let turns = 0;
    await runUntil(async () => (turns += await append((part) => part.first)), turnsStored);
    await runUntil(async () => (turns += await append((part) => part.rest)), async (n) => {
      const { calls, chats } = fixture;
      const [rows] = await live.query<{ tools: number; chats: number }>(`SELECT countIf(startsWith(SpanName, 'execute_tool ')) AS tools, countIf(startsWith(SpanName, 'chat ')) AS chats FROM (SELECT * FROM otel_traces LIMIT 1 BY SpanId)`);
      return (await turnsStored(n)) && rows.tools === calls && rows.chats === chats;
    });
    expect(parts.some((part) => part.first.length > 0 && part.rest.length > 0 && !turnEnd(part.first[part.first.length - 1]))).toBe(true);
    const once = storeCli(join(home, 'once'), () => env);
    await once.ccotel('backfill', '--json', '--codex-home', codexHome);
    expect(await live.query(SPANS)).toEqual(await once.query(SPANS));
    expect(await live.query(LOGS)).toEqual(await once.query(LOGS));
  }, 240_000);
});
