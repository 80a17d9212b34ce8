// The web view with both agents in one store (a generated Claude Code corpus and the recorded Codex rollouts): the
// sessions page names each session's agent, and filtering by an agent's name leaves its sessions, with their
// tokens and cost as `report session --json --agent` gives them; a Codex turn opens as a turn.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { storeCli } from '../e2e/store-cli.js';
import { generateCorpus } from '../generator/corpus.js';
import { codexFixtures } from '../harness/codex-fixtures.js';
import { cliEnv } from '../reliability/cli.js';
import { shown } from './browser.js';
import { withUi } from './with-ui.js';

describe('ccotel ui with Claude Code and Codex sessions', () => {
  const root = mkdtempSync(join(tmpdir(), 'ccotel-ui-agents-'));
  const storeDir = join(root, 'store');
  const fixture = codexFixtures().at(-1)!;
  const env = cliEnv(root, { CLAUDE_CONFIG_DIR: join(root, 'claude'), CODEX_HOME: fixture.home, TZ: 'UTC' });
  const { ccotel } = storeCli(storeDir, () => env);
  let codexRows: { period: string; total_tokens: number; cost_usd: number }[];
  const ui = withUi(storeDir, env, async () => {
    await generateCorpus({ seed: 31, root: join(root, 'claude'), sessions: 3, hostLayout: 'single-root' });
    await ccotel('backfill', '--no-progress');
    codexRows = (JSON.parse(await ccotel('report', 'session', '--json', '--agent', 'codex')) as { rows: typeof codexRows }).rows;
  });

  const rows = () => ui.page.$$eval('.viewport .row', (elements) => elements.map((row) => ({
    session: row.getAttribute('data-session') ?? '',
    agent: row.querySelector('.cell.agent')?.textContent ?? '',
    tokens: Number(row.querySelector('[data-figure="total_tokens"]')?.getAttribute('data-value')),
    cost: Number(row.querySelector('[data-figure="cost_usd"]')?.getAttribute('data-value')),
  })));

  it('names each session’s agent and filters by it', async () => {
    // All history: the recordings and the corpus are of other days.
    await ui.page.goto(`${ui.served.base}/#/sessions?from=0`);
    await shown(ui.page, 'sessions');
    const all = await rows();
    expect(new Set(all.map((row) => row.agent))).toEqual(new Set(['claude-code', 'codex']));
    await ui.page.type('input[type=search]', 'codex');
    const filtered = await rows();
    expect(filtered.map((row) => row.session).sort()).toEqual(codexRows.map((row) => row.period).sort());
    for (const row of filtered) {
      const reported = codexRows.find((r) => r.period === row.session)!;
      expect(row.agent).toBe('codex');
      expect([row.tokens, row.cost]).toEqual([reported.total_tokens, reported.cost_usd]);
    }
  });

  it('opens a Codex session with its turns as turns', async () => {
    const session = codexRows.find((row) => fixture.threads.includes(row.period))!.period;
    await ui.page.goto(`${ui.served.base}/#/session/${encodeURIComponent(session)}`);
    await shown(ui.page, 'session');
    const turns = await ui.page.$$eval('.turn', (elements) => elements.length);
    expect(turns).toBe(fixture.threads.filter((thread) => thread === session).length);
    expect(ui.consoleErrors).toEqual([]);
  });
});
