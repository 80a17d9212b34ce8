// Issue 31: every error a newcomer meets is one line that says what is wrong (and, where it can, what to do),
// with an exit code that is not 0. Each row ran against the built CLI before its fix: a 20-line client log and
// stack, `ccotel: ccotel:`, `not NaN`, and silence (an unknown key, a missing CCOTEL_CONFIG file, a content level
// a reading command did nothing with).
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { assertBuilt, cliEnv, runCli } from '../reliability/cli.js';

let home: string;
beforeAll(() => {
  assertBuilt();
  home = mkdtempSync(join(tmpdir(), 'ccotel-errors-'));
});
afterAll(() => rmSync(home, { recursive: true, force: true }));

const withConfig = (yaml: string) => {
  const path = join(home, `config-${Math.random().toString(36).slice(2)}.yaml`);
  writeFileSync(path, yaml);
  return { CCOTEL_CONFIG: path };
};

describe('errors in one line', () => {
  const rows: [string, () => { args: string[]; env?: Record<string, string> }, RegExp][] = [
    ['an unreachable store', () => ({ args: ['report', '--store', 'http://127.0.0.1:1'] }), /^ccotel: connect ECONNREFUSED 127\.0\.0\.1:1: nothing answers at that address; is the ClickHouse server/],
    ['a query that does not parse', () => ({ args: ['query', '--store', join(home, 'store'), 'SELEC 1'] }), /^ccotel: (?!ccotel:)\S/],
    ['a bad value in the config file', () => ({ args: ['report', '--store', join(home, 'store')], env: withConfig('idle_ms: soon\n') }), /^ccotel: idle_ms in \S+ must be a whole number of ms ≥ 0, not "soon"$/],
    ['a bad value in the environment', () => ({ args: ['report', '--store', join(home, 'store')], env: { CCOTEL_SCAN_INTERVAL_MS: '50' } }), /^ccotel: CCOTEL_SCAN_INTERVAL_MS must be a whole number of ms ≥ 100, not "50"$/],
    ['an unknown key in the config file', () => ({ args: ['report'], env: withConfig('stor: /tmp/x\n') }), /^ccotel: \S+: unknown key "stor" \(did you mean "store"\?\)$/],
    ['a config file CCOTEL_CONFIG names that is not there', () => ({ args: ['report'], env: { CCOTEL_CONFIG: join(home, 'missing.yaml') } }), /^ccotel: config file \S+missing\.yaml cannot be read \(ENOENT\): CCOTEL_CONFIG names it$/],
    ['a content level given to a reading command', () => ({ args: ['report', '--content-level', 'bogus'] }), /^error: unknown option '--content-level'/],
    ['a bad content level where it applies', () => ({ args: ['backfill', '--store', 'none', '--content-level', 'bogus'] }), /^ccotel: --content-level must be "none" or "masked", not "bogus"$/],
  ];
  it.each(rows)('%s', async (_name, make, expected) => {
    const { args, env } = make();
    const result = await runCli(args, cliEnv(home, env));
    expect(result.status).not.toBe(0);
    const lines = result.stderr.trimEnd().split('\n');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(expected);
  });
});
