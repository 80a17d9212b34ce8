// Issue 28 ("Hardening II"), rows 2 and 11 (file modes): nothing ccotel runs or writes into may be a
// directory or file another local user could have written. Tests run as root here, and root may write
// anywhere: "another user" is a chown to nobody (65534), and modes and owners are checked explicitly.
import { spawnSync } from 'node:child_process';
import { chmodSync, chownSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { runDoctor } from '../../sidecar/src/doctor/run-doctor.js';
import { installHooks } from '../../sidecar/src/install/hooks.js';
import { installShell, shellHookHandler, shellSourceLine } from '../../sidecar/src/install/shell.js';
import { statePaths } from '../../sidecar/src/paths.js';
import { bashToolScript, runHook, SHELL_SCRIPT } from '../hook/run.js';
import { assertBuilt, cliEnv, runCli, startRun } from '../reliability/cli.js';

const NOBODY = 65534;
const SESSION = '5d0c7a52-1f3e-4b8a-9c6d-2e7f8a9b0c1d';
const EVENT = '{"hook_event_name":"Stop","session_id":"s"}';

let home: string;
let env: NodeJS.ProcessEnv;

beforeEach(() => {
  home = mkdtempSync(join(tmpdir(), 'ccotel-adv-dirs-'));
  env = cliEnv(home);
});

afterEach(() => {
  rmSync(home, { recursive: true, force: true });
});

const mode = (path: string) => statSync(path).mode & 0o7777;

/** mkdir -p, then the mode set whatever the umask. */
function dirAt(path: string, dirMode: number, uid?: number): string {
  mkdirSync(path, { recursive: true });
  chmodSync(path, dirMode);
  if (uid !== undefined) chownSync(path, uid, uid);
  return path;
}

/** The command install-hooks wrote for an event, run the way Claude Code runs a command hook. */
function fireHook(event = 'Stop'): { status: number | null; stdout: string; stderr: string } {
  const settings = JSON.parse(readFileSync(join(home, '.claude', 'settings.json'), 'utf8'));
  const command: string = settings.hooks[event].at(-1).hooks[0].command;
  const run = spawnSync('/bin/sh', ['-c', command], { input: EVENT, env: { PATH: process.env.PATH }, encoding: 'utf8', timeout: 10_000 });
  return { status: run.status, stdout: run.stdout, stderr: run.stderr };
}

/** A script as another user would plant it: it leaves a mark when anything runs or sources it. */
function plant(path: string, mark: string, uid = NOBODY): void {
  rmSync(path, { force: true });
  writeFileSync(path, `echo pwned > '${mark}'\n`, { mode: 0o755 });
  chownSync(path, uid, uid);
}

/** A Bash tool command with the line install-shell's SessionStart handler puts into CLAUDE_ENV_FILE. */
function bashToolWithEnvFile(command: string, umask = '022') {
  const envFile = join(home, 'claude-env.sh');
  const settings = JSON.parse(readFileSync(join(home, '.claude', 'settings.json'), 'utf8'));
  const handler: string = settings.hooks.SessionStart.at(-1).hooks[0].command;
  rmSync(envFile, { force: true });
  spawnSync('/bin/sh', ['-c', handler], { env: { PATH: process.env.PATH, CLAUDE_ENV_FILE: envFile }, timeout: 10_000 });
  const script = bashToolScript(command, { envFileLine: readFileSync(envFile, 'utf8').trim(), cwdFile: '/dev/null' });
  const run = spawnSync('/bin/sh', ['-c', `umask ${umask} && exec bash -c "$1"`, 'sh', script], {
    env: { PATH: process.env.PATH, HOME: home, CLAUDE_CODE_SESSION_ID: SESSION },
    encoding: 'utf8',
    timeout: 20_000,
  });
  return { status: run.status, stdout: run.stdout, stderr: run.stderr };
}

describe('II.2: directories someone else could write', () => {
  it('install-hooks, install-shell and run make an existing 0777 state tree of ours 0700', async () => {
    assertBuilt();
    const state = join(home, 'state');
    for (const dir of ['', 'bin', 'spool', 'shell', 'checkpoints', 'otlp-queue']) dirAt(join(state, dir), 0o777);
    dirAt(join(home, 'store'), 0o777);
    for (const command of ['install-hooks', 'install-shell']) {
      const result = await runCli([command], env);
      expect(result.status, result.stderr).toBe(0);
    }
    for (const dir of ['', 'bin', 'spool', 'shell']) expect(mode(join(state, dir)), dir || 'state').toBe(0o700);
    expect(mode(join(state, 'bin', 'ccotel-hook.sh'))).toBe(0o700);
    expect(readdirSync(join(state, 'bin')).sort()).toEqual(['ccotel-hook.sh', 'ccotel-shell.bash']); // no temporary left

    chmodSync(state, 0o777);
    const run = startRun(['--store', join(home, 'store'), '--otlp', 'http://127.0.0.1:9'], env);
    try {
      const deadline = Date.now() + 90_000;
      while (!run.output().includes('following transcripts') && Date.now() < deadline) await new Promise((r) => setTimeout(r, 200));
      expect(run.output()).toContain('following transcripts');
      for (const dir of ['', 'spool', 'shell', 'checkpoints', 'otlp-queue']) expect(mode(join(state, dir)), dir || 'state').toBe(0o700);
      expect(mode(join(home, 'store'))).toBe(0o700);
    } finally {
      run.child.kill('SIGTERM');
      await run.exited;
    }
  }, 120_000);

  it('a state dir another user owns is refused with one line by install-hooks, install-shell and run; nothing is written', async () => {
    assertBuilt();
    const state = dirAt(join(home, 'state'), 0o755, NOBODY);
    for (const args of [['install-hooks'], ['install-shell'], ['run', '--store', join(home, 'store')]]) {
      const result = await runCli(args, env, 60_000);
      expect(result.status, args[0]).not.toBe(0);
      expect(result.stderr.trim(), args[0]).toMatch(new RegExp(`^[^\\n]*${state}[^\\n]*uid 65534[^\\n]*$`));
    }
    expect(readdirSync(state)).toEqual([]);
    expect(existsSync(join(home, '.claude', 'settings.json'))).toBe(false);
    expect(existsSync(join(home, 'store'))).toBe(false);
  });

  it('a spool or shell log dir another user owns (the state dir ours) is refused too', async () => {
    assertBuilt();
    dirAt(join(home, 'state', 'spool'), 0o700, NOBODY);
    dirAt(join(home, 'state', 'shell'), 0o700, NOBODY);
    const hooks = await runCli(['install-hooks'], env);
    expect(hooks.status).not.toBe(0);
    expect(hooks.stderr.trim()).toMatch(/^[^\n]*state\/spool[^\n]*uid 65534[^\n]*$/);
    const shell = await runCli(['install-shell'], env);
    expect(shell.status).not.toBe(0);
    expect(shell.stderr.trim()).toMatch(/^[^\n]*state\/shell[^\n]*uid 65534[^\n]*$/);
  });

  it('a world-writable parent without the sticky bit, or a parent another user owns, is refused; /tmp (root, sticky) is fine', async () => {
    assertBuilt();
    const cases = [
      { parent: dirAt(join(home, 'open'), 0o777), why: /world-writable/ },
      { parent: dirAt(join(home, 'theirs'), 0o1777, NOBODY), why: /uid 65534/ },
      { parent: dirAt(join(home, 'theirs-private'), 0o755, NOBODY), why: /uid 65534/ },
    ];
    for (const { parent, why } of cases) {
      const result = await runCli(['install-hooks'], { ...env, CCOTEL_STATE_DIR: join(parent, 'ccotel') });
      expect(result.status, parent).not.toBe(0);
      expect(result.stderr.trim(), parent).toMatch(new RegExp(`^[^\\n]*${parent}[^\\n]*$`));
      expect(result.stderr, parent).toMatch(why);
      expect(existsSync(join(parent, 'ccotel', 'bin')), parent).toBe(false);
    }
    const sticky = await runCli(['install-hooks'], { ...env, CCOTEL_STATE_DIR: join(dirAt(join(home, 'sticky'), 0o1777), 'ccotel') });
    expect(sticky.status, sticky.stderr).toBe(0);
  });

  it('the attack: a hook script another user planted, or one in a directory another user owns, is never run', () => {
    const paths = statePaths(env);
    installHooks({ env });
    const mark = join(home, 'pwned');
    const script = join(paths.binDir, 'ccotel-hook.sh');
    expect(fireHook()).toEqual({ status: 0, stdout: '', stderr: '' });
    expect(readdirSync(paths.spoolDir)).toHaveLength(1); // the real hook runs

    plant(script, mark);
    expect(fireHook()).toEqual({ status: 0, stdout: '', stderr: '' });
    expect(existsSync(mark)).toBe(false);

    plant(script, mark, 0); // ours, but in a directory another user owns (who could swap it at any time)
    chownSync(paths.binDir, NOBODY, NOBODY);
    expect(fireHook()).toEqual({ status: 0, stdout: '', stderr: '' });
    expect(existsSync(mark)).toBe(false);
  });

  it('the attack on the shell integration: a planted ccotel-shell.bash is never sourced, and the command runs as without it', () => {
    installShell({ env });
    const mark = join(home, 'pwned');
    const script = join(statePaths(env).binDir, 'ccotel-shell.bash');
    expect(bashToolWithEnvFile('echo hi')).toEqual({ status: 0, stdout: 'hi\n', stderr: '' });
    plant(script, mark);
    expect(bashToolWithEnvFile('echo hi')).toEqual({ status: 0, stdout: 'hi\n', stderr: '' });
    expect(existsSync(mark)).toBe(false);
  });

  it("an earlier install's unchecked shell line is replaced in place by install-shell, not left beside the checked one", () => {
    const paths = statePaths(env);
    const script = join(paths.binDir, 'ccotel-shell.bash');
    const unchecked = `__ccotel_shell_log_dir='${paths.shellLogDir}'; . '${script}'`;
    const earlier = { type: 'command', command: `[ -z "$CLAUDE_ENV_FILE" ] || printf '%s\\n' '${unchecked.replaceAll("'", `'\\''`)}' >>"$CLAUDE_ENV_FILE" 2>/dev/null; exit 0`, timeout: 5 };
    mkdirSync(join(home, '.claude'));
    writeFileSync(join(home, '.claude', 'settings.json'), JSON.stringify({ hooks: { SessionStart: [{ hooks: [earlier] }] } }));
    installShell({ env });
    const settings = JSON.parse(readFileSync(join(home, '.claude', 'settings.json'), 'utf8'));
    expect(settings.hooks.SessionStart).toEqual([{ hooks: [shellHookHandler(script, paths.shellLogDir)] }]);
  });

  it('the hook spools nothing into a spool dir another user owns: exit 0, silent, counted as untrusted', () => {
    const state = dirAt(join(home, 'state'), 0o700);
    const spool = dirAt(join(state, 'spool'), 0o777, NOBODY);
    for (const shell of ['dash', 'bash']) expect(runHook(shell, spool, EVENT), shell).toEqual({ status: 0, stdout: '', stderr: '' });
    expect(readdirSync(spool)).toEqual([]);
    expect(readFileSync(join(state, 'hook-dropped'), 'utf8')).toMatch(/^\d{20} untrusted\n\d{20} untrusted\n$/);

    // A state dir another user owns: not even the count is appended there (they could point it anywhere).
    rmSync(join(state, 'hook-dropped'));
    chownSync(state, NOBODY, NOBODY);
    chownSync(spool, 0, 0);
    expect(runHook('dash', spool, EVENT)).toEqual({ status: 0, stdout: '', stderr: '' });
    expect(readdirSync(spool)).toEqual([]);
    expect(existsSync(join(state, 'hook-dropped'))).toBe(false);
  });

  it('the shell log writes nothing into a log dir another user owns', () => {
    const logDir = dirAt(join(home, 'shell'), 0o777, NOBODY);
    const run = spawnSync('bash', ['-c', bashToolScript('echo hi', { envFileLine: shellSourceLine(SHELL_SCRIPT, logDir), cwdFile: '/dev/null' })], {
      env: { PATH: process.env.PATH, HOME: home, CLAUDE_CODE_SESSION_ID: SESSION },
      encoding: 'utf8',
    });
    expect({ status: run.status, stdout: run.stdout, stderr: run.stderr }).toEqual({ status: 0, stdout: 'hi\n', stderr: '' });
    expect(readdirSync(logDir)).toEqual([]);
  });

  it('doctor reports every such path: open or foreign state dirs, a foreign script, a world-writable parent, open shell logs, foreign spool files', async () => {
    const parent = dirAt(join(home, 'open'), 0o777);
    const doctorEnv = { HOME: home, PATH: process.env.PATH, CCOTEL_STATE_DIR: join(parent, 'ccotel') };
    const paths = statePaths(doctorEnv);
    chmodSync(parent, 0o755);
    installHooks({ env: doctorEnv });
    installShell({ env: doctorEnv });
    chmodSync(parent, 0o777);
    chmodSync(paths.stateDir, 0o777);
    chownSync(paths.binDir, NOBODY, NOBODY);
    chownSync(join(paths.binDir, 'ccotel-hook.sh'), NOBODY, NOBODY);
    writeFileSync(join(paths.shellLogDir, `${SESSION}.jsonl`), '{}\n');
    chmodSync(join(paths.shellLogDir, `${SESSION}.jsonl`), 0o666);
    writeFileSync(join(paths.spoolDir, '1-0a1b2c3d4e5f-2.json'), EVENT, { mode: 0o600 }); // planted while the dir was open
    chownSync(join(paths.spoolDir, '1-0a1b2c3d4e5f-2.json'), NOBODY, NOBODY);
    const report = await runDoctor({ env: doctorEnv, store: '', otlp: '', timeoutMs: 1000 });
    const check = report.checks.find((c) => c.check === 'permissions')!;
    expect(check.status).toBe('fail');
    expect(check.message).toContain(`${parent} is world-writable`);
    expect(check.message).toMatch(new RegExp(`state dir ${paths.stateDir} is 777, should be 700`));
    expect(check.message).toMatch(new RegExp(`script dir ${paths.binDir} belongs to uid 65534`));
    expect(check.message).toMatch(new RegExp(`hook script ${paths.binDir}/ccotel-hook.sh belongs to uid 65534`));
    expect(check.message).toMatch(/1 of 1 shell log files are readable by others/);
    expect(check.message).toMatch(/1 of 1 spool files belong to another user, e.g. 1-0a1b2c3d4e5f-2.json/);
    expect(check.fix).toContain(`chmod 700 ${paths.stateDir}`);
    expect(check.fix).toContain(`chmod 600 ${paths.shellLogDir}/*.jsonl`);
  });
});

describe('II.11: shell-log files under umask 000', () => {
  it('are created 0600 (a missing log dir 0700), while the command itself still runs under umask 000', () => {
    installShell({ env });
    const paths = statePaths(env);
    rmSync(paths.shellLogDir, { recursive: true }); // recreated by the integration
    const run = bashToolWithEnvFile('umask; touch "$HOME/made-by-command"', '000');
    expect(run).toEqual({ status: 0, stdout: '0000\n', stderr: '' });
    expect(mode(join(home, 'made-by-command'))).toBe(0o666);
    expect(mode(paths.shellLogDir)).toBe(0o700);
    expect(mode(join(paths.shellLogDir, `${SESSION}.jsonl`))).toBe(0o600);
    expect(readFileSync(join(paths.shellLogDir, `${SESSION}.jsonl`), 'utf8').split('\n').filter(Boolean)).toHaveLength(2);
  });

  it('a log dir recreated under umask 000 with its state dir gone: both 0700', () => {
    const logDir = join(home, 'state', 'shell');
    const script = bashToolScript('true', { envFileLine: shellSourceLine(SHELL_SCRIPT, logDir), cwdFile: '/dev/null' });
    const run = spawnSync('/bin/sh', ['-c', 'umask 000 && exec bash -c "$1"', 'sh', script], {
      env: { PATH: process.env.PATH, HOME: home, CLAUDE_CODE_SESSION_ID: SESSION },
      encoding: 'utf8',
    });
    expect(run.status).toBe(0);
    expect(mode(join(home, 'state'))).toBe(0o700);
    expect(mode(logDir)).toBe(0o700);
    expect(mode(join(logDir, `${SESSION}.jsonl`))).toBe(0o600);
  });
});
