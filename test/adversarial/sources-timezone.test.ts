// Hardening II row 12: `report --timezone garbage` printed an 18-line client stack (ClickHouse refusing the
// zone) before the message. The zone is now checked as the option is parsed: one line, exit 1, before any
// store is opened.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { assertBuilt, cliEnv, runCli } from '../reliability/cli.js';

describe('row 12: a bad --timezone', () => {
  const home = mkdtempSync(join(tmpdir(), 'ccotel-timezone-'));
  afterAll(() => rmSync(home, { recursive: true, force: true }));

  it.each([['daily'], ['session'], ['blocks'], []])('report %s --timezone garbage: one clear line, exit 1', async (...period: string[]) => {
    assertBuilt();
    const result = await runCli(['report', ...period, '--timezone', 'garbage', '--store', join(home, 'store')], cliEnv(home));
    expect(result.status).toBe(1);
    expect(result.stdout).toBe('');
    expect(result.stderr.trimEnd().split('\n')).toEqual([expect.stringMatching(/--timezone.*"garbage".*IANA/)]);
  });

  it('a real zone, in any case, is accepted', async () => {
    // A reading command needs a store: backfill makes the (empty) one it reads.
    expect((await runCli(['backfill', '--no-progress', '--store', join(home, 'store')], cliEnv(home))).status).toBe(0);
    const result = await runCli(['report', 'daily', '--json', '--timezone', 'europe/paris', '--store', join(home, 'store')], cliEnv(home));
    expect(result.stderr).toBe('');
    expect(JSON.parse(result.stdout).timezone).toBe('Europe/Paris');
  });
});
