// `ccotel run` follows Codex rollouts as Codex writes them — a home that appears after the start, a thread written
// turn by turn, a resume appended to its file — and stores exactly what a backfill of the same files stores.
import { appendFileSync, mkdirSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { codexFixtures } from '../harness/codex-fixtures.js';
import { assertBuilt, cliEnv, startRun } from '../reliability/cli.js';
import { storeCli } from './store-cli.js';

const SPANS = `SELECT SpanId, TraceId, ParentSpanId, SpanName, toUnixTimestamp64Nano(Timestamp) AS start, Duration, toString(SpanAttributes) AS attributes
  FROM (SELECT * FROM otel_traces LIMIT 1 BY SpanId) ORDER BY SpanId`;

async function until<T>(what: string, probe: () => Promise<T | undefined>, output: () => string): Promise<T> {
  const started = Date.now();
  for (;;) {
    const found = await probe().catch(() => undefined);
    if (found !== undefined) return found;
    if (Date.now() - started > 90_000) throw new Error(`no ${what} within 90 s:\n${output()}`);
    await new Promise((resolveWait) => setTimeout(resolveWait, 250));
  }
}

describe.each(codexFixtures())('ccotel run on Codex $version', (fixture) => {
  it('follows the rollouts as written and stores what a backfill of them stores', async () => {
    assertBuilt();
    const home = mkdtempSync(join(tmpdir(), 'ccotel-codex-live-'));
    const codexHome = join(home, 'codex');
    const env = cliEnv(home, { TZ: 'UTC' });
    const live = storeCli(join(home, 'live'), () => env);
    const run = startRun(['--store', join(home, 'live'), '--codex-home', codexHome], env);
    try {
      await until('start', async () => (run.output().includes('following transcripts') ? true : undefined), run.output);
      const sessionsWithTurns = async (n: number) => {
        const rows = await live.query<{ n: number }>(`SELECT count() AS n FROM (SELECT * FROM otel_traces WHERE SpanName = 'invoke_agent codex' LIMIT 1 BY SpanId)`);
        return rows[0].n >= n ? true : undefined;
      };
      // Each file as Codex writes it: up to the end of its first turn, then (a resume) the rest.
      const turnEnd = (line: string) => line.includes('"type":"task_complete"') || line.includes('"type":"turn_aborted"');
      let turnsWritten = 0;
      const rest: [string, string[]][] = [];
      for (const path of fixture.rollouts) {
        const lines = readFileSync(path, 'utf8').split('\n').filter(Boolean);
        const firstEnd = lines.findIndex(turnEnd) + 1;
        const target = join(codexHome, relative(fixture.home, path));
        mkdirSync(dirname(target), { recursive: true });
        appendFileSync(target, lines.slice(0, firstEnd).join('\n') + '\n');
        turnsWritten++;
        if (firstEnd < lines.length) rest.push([target, lines.slice(firstEnd)]);
      }
      await until(`${turnsWritten} turns stored`, () => sessionsWithTurns(turnsWritten), run.output);
      for (const [target, lines] of rest) {
        appendFileSync(target, lines.join('\n') + '\n');
        turnsWritten += lines.filter(turnEnd).length;
      }
      await until(`${turnsWritten} turns stored`, () => sessionsWithTurns(turnsWritten), run.output);
      const [calls, chats] = [fixture.runs.flatMap((r) => r.steps.flatMap((s) => s.calls ?? [])).length, fixture.runs.flatMap((r) => r.steps).length];
      await until('every call and chat', async () => {
        const rows = await live.query<{ tools: number; chats: number }>(`SELECT countIf(startsWith(SpanName, 'execute_tool ')) AS tools, countIf(startsWith(SpanName, 'chat ')) AS chats FROM (SELECT * FROM otel_traces LIMIT 1 BY SpanId)`);
        return rows[0].tools === calls && rows[0].chats === chats ? true : undefined;
      }, run.output);
    } finally {
      run.child.kill('SIGINT');
      await run.exited;
    }
    const once = storeCli(join(home, 'once'), () => env);
    await once.ccotel('backfill', '--json', '--codex-home', codexHome);
    expect(await live.query(SPANS)).toEqual(await once.query(SPANS));
  }, 240_000);
});
