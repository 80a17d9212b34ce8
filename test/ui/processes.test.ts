// A failure mode that names a process (orphan_process: pid, command, listening port) shows with its pid and port
// on the failure modes page and on its session's page, linked to its turn. The detection is written into the
// store as the detector writes it (its log record's attributes, DESIGN §6): the generated corpus has no live
// processes for the detector to find.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { storeCli, writeToStore } from '../e2e/store-cli.js';
import { generateCorpus } from '../generator/corpus.js';
import { shown } from './browser.js';
import { withUi } from './with-ui.js';

describe('ccotel ui: a failure mode with its process', () => {
  const root = mkdtempSync(join(tmpdir(), 'ccotel-ui-processes-'));
  const storeDir = join(root, 'store');
  const env = { ...process.env, HOME: join(root, 'home'), CLAUDE_CONFIG_DIR: join(root, 'corpus'), CCOTEL_STATE_DIR: join(root, 'state'), CCOTEL_RAW_TTL_DAYS: '0' };
  const { ccotel, query } = storeCli(storeDir, () => env);
  let turn: { trace: string; session: string; tool: string };
  const ui = withUi(storeDir, env, async () => {
    await generateCorpus({ seed: 31, root: join(root, 'corpus'), sessions: 3, hostLayout: 'single-root' });
    await ccotel('backfill', '--no-progress');
    [turn] = await query<{ trace: string; session: string; tool: string }>(
      `SELECT TraceId AS trace, SpanAttributes['session.id'] AS session, SpanAttributes['gen_ai.tool.call.id'] AS tool
       FROM otel_traces WHERE SpanName = 'execute_tool Bash' ORDER BY SpanId LIMIT 1`,
    );
    await writeToStore(storeDir, `INSERT INTO otel_logs (Timestamp, TraceId, EventName, SeverityText, LogAttributes) SELECT now64(9), '${turn.trace}',
      'ccotel.failure_mode.detected', 'WARN', map('session.id', '${turn.session}', 'mode', 'orphan_process', 'tool_use_id', '${turn.tool}',
      'process.pid', '4242', 'process.command_line', 'node server.js', 'network.local.port', '8080', 'ccotel.record.id', 'planted-1')`, env);
  });

  it('lists it with session, tool call, pid, port and command, linked to the turn', async () => {
    await ui.page.goto(`${ui.served.base}/#/failures`);
    await shown(ui.page, 'failures');
    const cells = await ui.page.$$eval('table.failures tbody tr[data-mode="orphan_process"] td', (tds) => tds.map((td) => td.textContent));
    expect(cells).toEqual([expect.any(String), 'orphan_process', '', turn.session, turn.tool, '4242', '8080', 'node server.js', 'turn', '']);
  });

  it("shows it on the session's page, with pid and port, next to the turn it belongs to", async () => {
    await ui.page.goto(`${ui.served.base}/#/session/${encodeURIComponent(turn.session)}?turn=${turn.trace}`);
    await shown(ui.page, 'session');
    const fact = await ui.page.$eval('.facts tr[data-event="ccotel.failure_mode.detected"]', (row) => row.textContent ?? '');
    expect(fact).toContain('orphan_process');
    expect(fact).toContain('pid 4242');
    expect(fact).toContain('port 8080');
    expect(fact).toContain(`call ${turn.tool}`);
    expect(await ui.page.$(`section.turn[data-trace="${turn.trace}"]`)).not.toBeNull();
    expect(ui.consoleErrors).toEqual([]);
  });
});
