// Issue 13, rows 16–18: secrets and telemetry kept from other users of the host, and a hook run without
// HOME. Temp HOMEs only; umask changes are undone after each test.
import { spawnSync } from 'node:child_process';
import { chmodSync, copyFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { installService, serviceEnvironmentPath, userUnitDir } from '../../sidecar/src/service/install-service.js';
import { SIDECAR_UNIT } from '../../sidecar/src/service/units.js';
import { openStore } from '../../sidecar/src/store/open-store.js';
import { HOOK_SCRIPT } from '../hook/run.js';
import { assertBuilt, CLI, cliEnv, runProcess } from '../reliability/cli.js';

let home: string;
let umask: number;

beforeEach(() => {
  home = mkdtempSync(join(tmpdir(), 'ccotel-adv-perm-'));
  umask = process.umask();
});

afterEach(() => {
  process.umask(umask);
  rmSync(home, { recursive: true, force: true });
});

const mode = (path: string) => statSync(path).mode & 0o777;

describe('files other users must not read', () => {
  it('row 16: a store URL with a password goes into a 0600 environment file the units name, not into the units', () => {
    process.umask(0);
    const password = `pw-${Math.random().toString(36).slice(2)}`;
    const env = { HOME: home, USER: 'agent', CCOTEL_STORE: `http://ccotel:${password}@clickhouse.internal:8123` };
    installService({ env, run: () => ({ status: 0, stdout: '', stderr: '' }), program: { node: process.execPath, cli: '/opt/ccotel/cli.js' } });
    const unitDir = userUnitDir(env);
    for (const name of readdirSync(unitDir)) expect(readFileSync(join(unitDir, name), 'utf8'), name).not.toContain(password);
    const environmentFile = serviceEnvironmentPath(env);
    expect(readFileSync(join(unitDir, SIDECAR_UNIT), 'utf8')).toContain(`EnvironmentFile=${environmentFile}\n`);
    expect(readFileSync(environmentFile, 'utf8')).toContain(`CCOTEL_STORE="http://ccotel:${password}@clickhouse.internal:8123"`);
    expect(mode(environmentFile)).toBe(0o600);
  });

  it('row 17: the embedded store directory is 0700 under umask 000, and an existing 0755 one is made 0700', async () => {
    process.umask(0);
    const dir = join(home, 'store');
    const store = await openStore(dir, { command: 'test', access: 'write' });
    await store.close();
    expect(mode(dir)).toBe(0o700);

    chmodSync(dir, 0o755);
    const again = await openStore(dir, { command: 'test', access: 'write' });
    await again.close();
    expect(mode(dir)).toBe(0o700);
  });

  it('row 18: with no HOME and no spool argument the hook spools beside its own directory; exit 0, silent', () => {
    const stateDir = join(home, 'state');
    mkdirSync(join(stateDir, 'bin'), { recursive: true, mode: 0o700 });
    const script = join(stateDir, 'bin', 'ccotel-hook.sh');
    copyFileSync(HOOK_SCRIPT, script);
    chmodSync(script, 0o700);
    for (const shell of ['dash', 'bash']) {
      const result = spawnSync(shell, [script], { input: '{"hook_event_name":"Stop"}', env: { PATH: process.env.PATH }, encoding: 'utf8', timeout: 10_000 });
      expect({ status: result.status, stdout: result.stdout, stderr: result.stderr }, shell).toEqual({ status: 0, stdout: '', stderr: '' });
    }
    const spooled = readdirSync(join(stateDir, 'spool'));
    expect(spooled).toHaveLength(2);
    expect(readFileSync(join(stateDir, 'spool', spooled[0]), 'utf8')).toBe('{"hook_event_name":"Stop"}');
    expect(existsSync(join(stateDir, 'hook-dropped'))).toBe(false);
  });

  it('what held: every file and directory ccotel writes under the state dir is private under umask 000', async () => {
    assertBuilt();
    const project = join(home, 'claude', 'projects', 'P');
    mkdirSync(project, { recursive: true });
    writeFileSync(join(project, '11111111-2222-3333-4444-555555555555.jsonl'), 'not json\n');
    const result = await runProcess('sh', ['-c', 'umask 000 && exec "$0" "$@"', process.execPath, CLI, 'backfill', '--store', join(home, 'store')], cliEnv(home), 120_000);
    expect(result.status, result.stderr).toBe(0);
    const entries = readdirSync(join(home, 'state'), { recursive: true, withFileTypes: true });
    expect(entries.length).toBeGreaterThan(0);
    for (const entry of entries) {
      const path = join(entry.parentPath, entry.name);
      expect(mode(path) & 0o077, path).toBe(0);
    }
    expect(mode(join(home, 'store'))).toBe(0o700);
  });
});
