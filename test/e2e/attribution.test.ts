// Issue 32, attribution (DESIGN §11), end to end: a backfill of generated transcripts in real git repositories (one
// whose remote holds a password), a directory that is no repository, one that is gone, a session that changes
// branch half-way and a ticket pattern; every record says where it came from, the summaries keep it, and
// `report --by` / the filters answer what this test counts itself from the transcripts it wrote.
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { appendFileSync, mkdirSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { machineId } from '../../sidecar/src/resource.js';
import { assertBuilt, cliEnv, runCli, runProcess } from '../reliability/cli.js';
import { sessionPath, turnLines, uuidOf } from '../reliability/transcripts.js';

const home = mkdtempSync(join(tmpdir(), 'ccotel-attribution-'));
const store = join(home, 'store');
const password = randomBytes(18).toString('base64url');
const START = Date.UTC(2026, 9, 5, 9);
const TICKETS = '[A-Z]+-[0-9]+';

const git = (dir: string, ...args: string[]) => execFileSync('git', ['-C', dir, ...args], { stdio: 'pipe', env: { PATH: process.env.PATH, HOME: home, GIT_CONFIG_NOSYSTEM: '1' } });
function repository(name: string, remote?: string): string {
  const dir = join(home, 'src', name);
  mkdirSync(dir, { recursive: true });
  git(dir, 'init', '-q');
  if (remote) git(dir, 'remote', 'add', 'origin', remote);
  return dir;
}

const alpha = repository('alpha', `https://ci-bot:${password}@git.example.com/acme/alpha.git`);
const beta = repository('beta', 'git@github.com:acme/beta.git');
const local = repository('local-only');
const plain = join(home, 'src', 'scratch');
mkdirSync(plain, { recursive: true });
const gone = join(alpha, 'removed-since'); // inside alpha, but not there any more: no repository at all

interface SessionPlan {
  id: string;
  cwd: string;
  /** The branch of each turn. */
  branches: string[];
}

const SESSIONS: SessionPlan[] = [
  { id: uuidOf('attr/alpha-1'), cwd: alpha, branches: ['main', 'main', 'feature/PAY-12-retry'] },
  { id: uuidOf('attr/alpha-2'), cwd: join(alpha, 'docs'), branches: ['main'] },
  { id: uuidOf('attr/beta'), cwd: beta, branches: ['PAY-7-fix', 'PAY-7-fix'] },
  { id: uuidOf('attr/local'), cwd: local, branches: ['main'] },
  { id: uuidOf('attr/plain'), cwd: plain, branches: ['', ''] },
  { id: uuidOf('attr/gone'), cwd: gone, branches: ['main'] },
];
mkdirSync(join(alpha, 'docs'));

/** What this test expects per repository, counted from the turns it writes (turnLines: two chats a turn, input 10 + index, output 5 each). */
const REPOSITORY_OF = new Map([[alpha, 'https://git.example.com/acme/alpha'], [join(alpha, 'docs'), 'https://git.example.com/acme/alpha'], [beta, 'https://github.com/acme/beta']]);
type Tally = { sessions: Set<string>; input: number; output: number };
function tally(key: (plan: SessionPlan, turn: number) => string): Map<string, Tally> {
  const byKey = new Map<string, Tally>();
  SESSIONS.forEach((plan) => plan.branches.forEach((_, turn) => {
    const value = key(plan, turn);
    if (!byKey.has(value)) byKey.set(value, { sessions: new Set(), input: 0, output: 0 });
    const entry = byKey.get(value)!;
    entry.sessions.add(plan.id);
    entry.input += 2 * (10 + turn);
    entry.output += 2 * 5;
  }));
  return byKey;
}
const figures = (byKey: Map<string, Tally>) =>
  [...byKey].map(([value, t]) => ({ value, sessions: t.sessions.size, input_tokens: t.input, output_tokens: t.output })).sort((a, b) => a.value.localeCompare(b.value));

let env: NodeJS.ProcessEnv;
const query = async (sql: string) => {
  const result = await runCli(['query', sql, '-f', 'JSONEachRow', '--store', store], env);
  expect(result.status, result.stderr).toBe(0);
  return result.stdout.trim().split('\n').filter(Boolean).map((line) => JSON.parse(line) as Record<string, unknown>);
};
const reportJson = async (...args: string[]) => {
  const result = await runCli(['report', ...args, '--json', '--store', store], env);
  expect(result.status, result.stderr).toBe(0);
  return JSON.parse(result.stdout) as { rows: Record<string, unknown>[]; totals: Record<string, number> };
};
const reportFigures = (rows: Record<string, unknown>[], by: string) =>
  rows.map((row) => ({ value: String(row[by]), sessions: row.sessions, input_tokens: row.input_tokens, output_tokens: row.output_tokens })).sort((a, b) => a.value.localeCompare(b.value));

beforeAll(async () => {
  assertBuilt();
  SESSIONS.forEach((plan, n) => {
    const lines = plan.branches.flatMap((gitBranch, index) => turnLines({ sessionId: plan.id, index, startMs: START + n * 3_600_000, cwd: plan.cwd, gitBranch }));
    const path = sessionPath(join(home, 'claude'), plan.id, plan.cwd.replace(/[^a-zA-Z0-9]/g, '-'));
    mkdirSync(join(path, '..'), { recursive: true });
    appendFileSync(path, lines.map((line) => `${line}\n`).join(''));
  });
  env = cliEnv(home, { TZ: 'UTC', OTEL_RESOURCE_ATTRIBUTES: 'team=payments,cost_center=cc-42' });
  const backfill = await runCli(['backfill', '--no-progress', '--store', store, '--ticket-pattern', TICKETS], env, 300_000);
  expect(backfill.status, backfill.stderr).toBe(0);
}, 300_000);

describe('records', () => {
  it('carry the branch each row names: the session that changed branch has its later turn on the new one, with its ticket', async () => {
    const [changed] = SESSIONS;
    expect(await query(`SELECT SpanAttributes['vcs.ref.head.name'] AS branch, SpanAttributes['ccotel.ticket'] AS ticket,
        SpanAttributes['vcs.repository.url.full'] AS repo, SpanAttributes['ccotel.cwd'] AS cwd, count() AS spans
      FROM otel_traces WHERE SpanAttributes['session.id'] = '${changed.id}' GROUP BY ALL ORDER BY branch`)).toEqual([
      // turnLines: a turn is a root, two chats and a tool call.
      { branch: 'feature/PAY-12-retry', ticket: 'PAY-12', repo: 'https://git.example.com/acme/alpha', cwd: alpha, spans: 4 },
      { branch: 'main', ticket: '', repo: 'https://git.example.com/acme/alpha', cwd: alpha, spans: 8 },
    ]);
    const logs = await query(`SELECT LogAttributes['vcs.ref.head.name'] AS branch, count() AS n FROM otel_logs
      WHERE LogAttributes['session.id'] = '${changed.id}' GROUP BY branch ORDER BY branch`);
    expect(logs.map((row) => row.branch)).toEqual(['feature/PAY-12-retry', 'main']);
  });

  it('name no repository for a directory in none, one without a remote, or one that is gone', async () => {
    const ids = [SESSIONS[3], SESSIONS[4], SESSIONS[5]].map((plan) => `'${plan.id}'`).join(', ');
    expect(await query(`SELECT DISTINCT SpanAttributes['vcs.repository.url.full'] AS repo FROM otel_traces WHERE SpanAttributes['session.id'] IN (${ids})`))
      .toEqual([{ repo: '' }]);
    expect(await query(`SELECT count() AS n FROM otel_traces WHERE SpanAttributes['session.id'] = '${SESSIONS[4].id}' AND mapContains(SpanAttributes, 'vcs.ref.head.name')`))
      .toEqual([{ n: 0 }]);
  });

  it('never store the password of a remote URL, in any table', async () => {
    const tables = await query(`SELECT name FROM system.tables WHERE database = currentDatabase() AND engine NOT LIKE '%View%'`);
    expect(tables.length).toBeGreaterThan(5);
    const holding = (table: string, text: string) => query(`SELECT count() AS n FROM \`${table}\` AS t WHERE position(toString(tuple(t.*)), '${text}') > 0`);
    for (const { name } of tables) expect(await holding(String(name), password), String(name)).toEqual([{ n: 0 }]);
    // The same search finds the repository the URL names: it is there, without its credentials.
    for (const table of ['otel_traces', 'otel_logs', 'ccotel_span_facts', 'ccotel_session_summaries']) {
      expect(await holding(table, 'https://git.example.com/acme/alpha'), table).not.toEqual([{ n: 0 }]);
    }
  });

  it('carry the host id and OTEL_RESOURCE_ATTRIBUTES on the resource', async () => {
    expect(await query(`SELECT DISTINCT ResourceAttributes['host.id'] AS id, ResourceAttributes['team'] AS team FROM otel_traces`))
      .toEqual([{ id: machineId() ?? '', team: 'payments' }]);
  });
});

describe('summaries', () => {
  it('keep each session\'s repository, last branch, every branch, ticket and resource attributes', async () => {
    const [changed, , betaSession] = SESSIONS;
    expect(await query(`SELECT Repository, Branch, Branches, Ticket, Resource FROM ccotel_session_summaries FINAL
      WHERE SessionId IN ('${changed.id}', '${betaSession.id}') ORDER BY Repository`)).toEqual([
      { Repository: 'https://git.example.com/acme/alpha', Branch: 'feature/PAY-12-retry', Branches: ['feature/PAY-12-retry', 'main'], Ticket: 'PAY-12', Resource: { cost_center: 'cc-42', team: 'payments' } },
      { Repository: 'https://github.com/acme/beta', Branch: 'PAY-7-fix', Branches: ['PAY-7-fix'], Ticket: 'PAY-7', Resource: { cost_center: 'cc-42', team: 'payments' } },
    ]);
  });
});

describe('the web view', () => {
  /** What the web view's data for `page` (its sessions or overview) holds, as JSON. */
  async function webView<T>(page: 'sessions' | 'overview'): Promise<T> {
    const dist = join(import.meta.dirname, '..', '..', 'dist', 'sidecar', 'src');
    const script = `const { openStore } = await import(${JSON.stringify(join(dist, 'store', 'open-store.js'))});
      const { UiData } = await import(${JSON.stringify(join(dist, 'ui', 'data.js'))});
      const store = await openStore(process.argv[1], { command: 'test', access: 'read' });
      try { console.log(JSON.stringify(await new UiData(store.client).${page}({}))); } finally { await store.close(); }`;
    const result = await runProcess(process.execPath, ['--input-type=module', '-e', script, store], env);
    expect(result.status, result.stderr).toBe(0);
    return JSON.parse(result.stdout) as T;
  }

  it('lists each session with its repository and the branch it was on last', async () => {
    const sessions = new Map((await webView<{ session: string; repo: string; branch: string }[]>('sessions')).map(({ session, repo, branch }) => [session, { session, repo, branch }]));
    expect(sessions.size).toBe(SESSIONS.length);
    for (const plan of SESSIONS) {
      expect(sessions.get(plan.id), plan.cwd).toEqual({ session: plan.id, repo: REPOSITORY_OF.get(plan.cwd) ?? '', branch: plan.branches.at(-1) });
    }
  });

  it('sums the overview\'s usage by repository as this test counts it', async () => {
    const { repositories } = await webView<{ repositories: { repository: string; sessions: number; tokens: number }[] }>('overview');
    const expected = figures(tally((plan) => REPOSITORY_OF.get(plan.cwd) ?? ''))
      .map(({ value, sessions, input_tokens, output_tokens }) => ({ repository: value, sessions, tokens: input_tokens + output_tokens }));
    expect(repositories.map(({ repository, sessions, tokens }) => ({ repository, sessions, tokens })).sort((a, b) => a.repository.localeCompare(b.repository))).toEqual(expected);
  });
});

describe('report --by and its filters', () => {
  it('report --by repo equals the count made here from the transcripts', async () => {
    const report = await reportJson('--by', 'repo');
    expect(report.rows.every((row) => row.period === 'all')).toBe(true);
    expect(reportFigures(report.rows, 'repo')).toEqual(figures(tally((plan) => REPOSITORY_OF.get(plan.cwd) ?? '')));
    expect(report.totals.sessions).toBe(SESSIONS.length);
  });

  it('report daily --by branch splits the session that changed branch at the turn that did', async () => {
    const report = await reportJson('daily', '--by', 'branch');
    expect(new Set(report.rows.map((row) => row.period))).toEqual(new Set(['2026-10-05']));
    expect(reportFigures(report.rows, 'branch')).toEqual(figures(tally((plan, turn) => plan.branches[turn])));
  });

  it('breaks down by ticket, team, host, user and project', async () => {
    expect(reportFigures((await reportJson('--by', 'ticket')).rows, 'ticket'))
      .toEqual(figures(tally((plan, turn) => /[A-Z]+-[0-9]+/.exec(plan.branches[turn])?.[0] ?? '')));
    expect(reportFigures((await reportJson('--by', 'team')).rows, 'team')).toEqual(figures(tally(() => 'payments')));
    expect(reportFigures((await reportJson('--by', 'resource.cost_center')).rows, 'resource.cost_center')).toEqual(figures(tally(() => 'cc-42')));
    const [host] = (await query(`SELECT DISTINCT ResourceAttributes['host.name'] AS host, ResourceAttributes['user.name'] AS user FROM otel_traces`));
    expect(reportFigures((await reportJson('--by', 'host')).rows, 'host')).toEqual(figures(tally(() => String(host.host))));
    expect(reportFigures((await reportJson('--by', 'user')).rows, 'user')).toEqual(figures(tally(() => String(host.user))));
    expect(reportFigures((await reportJson('--by', 'project')).rows, 'project')).toEqual(figures(tally((plan) => plan.cwd)));
  });

  it('filters by repository, branch, host and user', async () => {
    const onlyAlpha = await reportJson('session', '--repo', 'acme/alpha');
    expect(onlyAlpha.rows.map((row) => row.period).sort()).toEqual([SESSIONS[0].id, SESSIONS[1].id].sort());
    const onMain = await reportJson('--branch', 'main', '--by', 'repo');
    expect(reportFigures(onMain.rows, 'repo')).toEqual(figures(tally((plan, turn) => (plan.branches[turn] === 'main' ? REPOSITORY_OF.get(plan.cwd) ?? '' : 'other'))).filter((row) => row.value !== 'other'));
    const [host] = (await query(`SELECT DISTINCT ResourceAttributes['host.name'] AS host, ResourceAttributes['user.name'] AS user FROM otel_traces`));
    expect((await reportJson('daily', '--host', String(host.host), '--user', String(host.user))).totals.sessions).toBe(SESSIONS.length);
    expect((await reportJson('daily', '--host', 'another-host')).rows).toEqual([]);
    const none = await runCli(['report', 'daily', '--user', 'nobody-here', '--store', store], env);
    expect(none.stdout).toContain('no usage (user nobody-here) in the store');
  });

  it('prints the break-down as a table, naming usage of no repository', async () => {
    const result = await runCli(['report', '--by', 'repo', '--store', store], env);
    expect(result.status, result.stderr).toBe(0);
    expect(result.stdout).toContain('https://github.com/acme/beta');
    expect(result.stdout).toContain('(none)');
    expect(result.stdout).toContain(`total (${SESSIONS.length} sessions)`);
  });

  it('refuses a dimension it does not know, and a break-down of billing blocks', async () => {
    const unknown = await runCli(['report', '--by', 'colour', '--store', store], env);
    expect(unknown.status).not.toBe(0);
    expect(unknown.stderr).toContain('--by colour: use one of host, user, repo, branch, ticket, team, project, or resource.KEY');
    const blocks = await runCli(['report', 'blocks', '--by', 'repo', '--store', store], env);
    expect(blocks.status).not.toBe(0);
  });
});
