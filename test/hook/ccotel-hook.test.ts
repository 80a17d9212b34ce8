import { spawnSync } from 'node:child_process';
import { chmodSync, chownSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { CLAUDE_CODE_HOOK_EVENTS } from '../../sidecar/src/install/hook-events.js';
import { hookPayloads } from './payloads.js';
import { canMountPrivateTmpfs, HOOK_SCRIPT, runHook, runHookAsync, unprivilegedPrefix } from './run.js';

const SPOOL_NAME = /^(\d+)-([0-9a-f]{8}-[0-9a-f]{4})-(\d+)\.json$/;

let root: string;
beforeEach(() => {
  root = mkdtempSync(join(tmpdir(), 'ccotel-hook-'));
});
afterEach(() => {
  rmSync(root, { recursive: true, force: true });
});

const firedAtNs = (spool: string, name: string): bigint => statSync(join(spool, name), { bigint: true }).mtimeNs;

/** In firing order, as the sidecar reads them: by modification time, then by the hook's pid. */
function spoolFiles(spool: string): string[] {
  const pid = (name: string) => Number(name.split('-')[0]);
  return readdirSync(spool)
    .map((name) => ({ name, ns: firedAtNs(spool, name) }))
    .sort((a, b) => (a.ns === b.ns ? pid(a.name) - pid(b.name) : a.ns < b.ns ? -1 : 1))
    .map(({ name }) => name);
}

function droppedLines(stateDir: string): string[] {
  const path = join(stateDir, 'hook-dropped');
  return existsSync(path) ? readFileSync(path, 'utf8').split('\n').filter(Boolean) : [];
}

describe.each(['dash', 'bash'])('ccotel-hook.sh under %s', (shell) => {
  it('spools every event kind byte-for-byte, in firing order, with private modes', () => {
    const spool = join(root, 'state', 'spool');
    const payloads = hookPayloads({ sessionId: '3f1c2b9e-8d7a-4c6b-9e5f-0a1b2c3d4e5f', cwd: '/home/dev/my "proj"' });
    // Vary the framing: compact, pretty, with and without a trailing newline — the hook must not care.
    const sent = CLAUDE_CODE_HOOK_EVENTS.map((event, i) =>
      i % 2 === 0 ? JSON.stringify(payloads[event]) : `${JSON.stringify(payloads[event], null, 2)}\n`,
    );

    const startNs = BigInt(Date.now()) * 1_000_000n;
    for (const input of sent) {
      expect(runHook(shell, spool, input)).toEqual({ status: 0, stdout: '', stderr: '' });
    }
    const endNs = BigInt(Date.now() + 1) * 1_000_000n;

    const names = spoolFiles(spool);
    expect(names).toHaveLength(sent.length);
    names.forEach((name, i) => {
      const match = SPOOL_NAME.exec(name);
      expect(match, name).not.toBeNull();
      const firedNs = firedAtNs(spool, name);
      expect(firedNs >= startNs && firedNs <= endNs).toBe(true);
      expect(readFileSync(join(spool, name), 'utf8')).toBe(sent[i]);
      expect(statSync(join(spool, name)).mode & 0o777).toBe(0o600);
    });
    expect(statSync(spool).mode & 0o777).toBe(0o700);
    expect(statSync(join(root, 'state')).mode & 0o777).toBe(0o700);
    expect(droppedLines(join(root, 'state'))).toEqual([]);
  });

  it('names the Claude Code process that fired it: CLAUDE_PID, else its parent', () => {
    const spool = join(root, 'spool');
    expect(runHook(shell, spool, '{"hook_event_name":"SessionStart"}', { CLAUDE_PID: '4242' }).status).toBe(0);
    expect(SPOOL_NAME.exec(spoolFiles(spool)[0])![3]).toBe('4242');
    rmSync(spool, { recursive: true });
    expect(runHook(shell, spool, '{"hook_event_name":"SessionStart"}', { CLAUDE_PID: 'not-a-pid' }).status).toBe(0);
    expect(SPOOL_NAME.exec(spoolFiles(spool)[0])![3]).toBe(String(process.pid));
  });

  it('keeps a 5 MB payload and bytes that are not UTF-8 intact', () => {
    const spool = join(root, 'spool');
    const big = Buffer.concat([
      Buffer.from('{"hook_event_name":"PostToolUse","tool_response":{"stdout":"'),
      Buffer.alloc(5 * 1024 * 1024, 'x'),
      Buffer.from([0xff, 0xfe, 0x00, 0x0a]),
      Buffer.from('"}}'),
    ]);
    expect(runHook(shell, spool, big)).toEqual({ status: 0, stdout: '', stderr: '' });
    const [name] = spoolFiles(spool);
    expect(readFileSync(join(spool, name)).equals(big)).toBe(true);
  });

  it('gives concurrent events distinct files and loses none', async () => {
    const spool = join(root, 'spool');
    mkdirSync(spool, { mode: 0o700 });
    const inputs = Array.from({ length: 16 }, (_, i) => JSON.stringify({ hook_event_name: 'PreToolUse', n: i }));
    const results = await Promise.all(inputs.map((input) => runHookAsync(shell, spool, input)));
    expect(results.every((r) => r.status === 0 && r.stdout === '')).toBe(true);
    const contents = spoolFiles(spool).map((name) => readFileSync(join(spool, name), 'utf8'));
    expect(contents.sort()).toEqual([...inputs].sort());
  });

  it('finds the spool from CCOTEL_STATE_DIR when no directory is given', () => {
    const stateDir = join(root, 'custom-state');
    expect(runHook(shell, undefined, '{"hook_event_name":"Stop"}', { CCOTEL_STATE_DIR: stateDir }).status).toBe(0);
    expect(spoolFiles(join(stateDir, 'spool'))).toHaveLength(1);
  });

  it('drops the event, counts it and still exits 0 silently when the spool is read-only', () => {
    const stateDir = join(root, 'state');
    const spool = join(stateDir, 'spool');
    mkdirSync(spool, { recursive: true });
    chmodSync(root, 0o755);
    chmodSync(spool, 0o555);
    const [command, ...args] = [...unprivilegedPrefix(), shell, HOOK_SCRIPT, spool];
    // Both the hook's user's own (the hook spools into nothing else): as root, the hook runs as nobody.
    if (command === 'setpriv') for (const dir of [stateDir, spool]) chownSync(dir, 65534, 65534);
    const run = () => spawnSync(command, args, { input: '{"hook_event_name":"PreToolUse"}', encoding: 'utf8', timeout: 10_000 });
    for (let i = 0; i < 2; i++) {
      const result = run();
      expect({ status: result.status, stdout: result.stdout, stderr: result.stderr }).toEqual({ status: 0, stdout: '', stderr: '' });
    }
    expect(readdirSync(spool)).toEqual([]);
    const lines = droppedLines(stateDir);
    expect(lines).toHaveLength(2);
    expect(lines[0]).toMatch(/^\d{20} write$/);
  });

  it('exits 0 silently when the spool path is not a directory at all', () => {
    const notADir = join(root, 'spool');
    writeFileSync(notADir, 'occupied');
    expect(runHook(shell, notADir, '{"hook_event_name":"Stop"}')).toEqual({ status: 0, stdout: '', stderr: '' });
    expect(droppedLines(root)).toHaveLength(1);
    expect(readFileSync(notADir, 'utf8')).toBe('occupied');
  });

  it.runIf(canMountPrivateTmpfs())('drops the event and leaves no temp file when the disk is full', () => {
    // A private 64 KB tmpfs holds the state dir; a 200 KB event cannot fit.
    const stateDir = join(root, 'full');
    mkdirSync(stateDir);
    const script = `mount -t tmpfs -o size=64k tmpfs "$1" && head -c 204800 /dev/zero | ${shell} "$2" "$1/spool"; echo "status=$?"; ls -A "$1/spool"; cat "$1/hook-dropped"`;
    const result = spawnSync('unshare', ['--user', '--map-root-user', '--mount', 'sh', '-c', script, 'sh', stateDir, HOOK_SCRIPT], {
      encoding: 'utf8',
      timeout: 10_000,
    });
    const [status, ...rest] = result.stdout.trim().split('\n');
    expect(status).toBe('status=0');
    expect(rest).toHaveLength(1); // ls of the spool printed nothing: no .tmp- left behind
    expect(rest[0]).toMatch(/^\d{20} write$/);
  });
});
