import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { spawn, spawnSync } from 'node:child_process';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { shellSourceLine } from '../../sidecar/src/install/shell.js';
import { bashToolScript, runLikeBashTool, SHELL_SCRIPT, type BashToolOptions } from './run.js';

const SESSION = '5d0c7a52-1f3e-4b8a-9c6d-2e7f8a9b0c1d';

let dir: string;
let logDir: string;
let started: number[];

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'ccotel-shell-'));
  logDir = join(dir, 'shell');
  mkdirSync(logDir, { mode: 0o700 });
  started = [];
});
afterEach(() => {
  for (const pid of started) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // already gone
    }
  }
  rmSync(dir, { recursive: true, force: true });
});

interface ShellRecord {
  v: number;
  ev: 'start' | 'end';
  sid: string;
  tp?: string;
  pid: number;
  ppid?: number;
  pgid?: number | null;
  psid?: number | null;
  tty?: string;
  cwd: string;
  cmd?: string;
  cmdlen?: number;
  ts: number;
  status?: number;
  seq: number;
}

function records(sessionId = SESSION): ShellRecord[] {
  const file = join(logDir, `${sessionId}.jsonl`);
  if (!existsSync(file)) return [];
  return readFileSync(file, 'utf8').split('\n').filter(Boolean).map((line) => JSON.parse(line) as ShellRecord);
}

function options(extra: Partial<BashToolOptions> = {}, integration = true): BashToolOptions {
  return {
    envFileLine: integration ? shellSourceLine(SHELL_SCRIPT, logDir) : undefined,
    cwdFile: join(dir, 'cwd'),
    ...extra,
    env: { HOME: dir, LANG: 'C.UTF-8', CLAUDE_CODE_SESSION_ID: SESSION, ...extra.env },
  };
}

/** Runs the command without and with the integration; both runs must look exactly the same. */
function runBoth(command: string, extra: Partial<BashToolOptions> = {}) {
  const without = runLikeBashTool(command, options(extra, false));
  expect(records()).toEqual([]);
  const withIt = runLikeBashTool(command, options(extra));
  expect({ status: withIt.status, stdout: withIt.stdout.toString(), stderr: withIt.stderr.toString() }).toEqual({
    status: without.status,
    stdout: without.stdout.toString(),
    stderr: without.stderr.toString(),
  });
  return withIt;
}

function expectOnePair(command: string, status: number): [ShellRecord, ShellRecord] {
  const [start, end, ...rest] = records();
  expect(rest).toEqual([]);
  expect(start).toMatchObject({ v: 1, ev: 'start', sid: SESSION, cmd: command, cmdlen: Buffer.byteLength(command), seq: 1 });
  expect(end).toMatchObject({ v: 1, ev: 'end', sid: SESSION, pid: start.pid, seq: 1, status });
  expect(end.ts).toBeGreaterThanOrEqual(start.ts);
  expect(start.ts).toBeGreaterThan((Date.now() - 60_000) * 1000); // epoch microseconds
  return [start, end];
}

describe('ccotel-shell.bash in a Bash tool shell', () => {
  it('logs a successful command and leaves its output alone', () => {
    const command = 'echo hello; echo oops >&2';
    expect(runBoth(command).status).toBe(0);
    const [start] = expectOnePair(command, 0);
    expect(start.cwd).toBe(process.cwd());
    expect(start.ppid).toBe(process.pid);
    expect(start.tty).toBe('');
    expect(start.tp).toBe('');
  });

  it('logs a one-word command, which Claude Code passes unquoted (`eval pwd`), not the lines before it', () => {
    for (const [command, status] of [['pwd', 0], ['./build.sh', 127], ['make:all', 127]] as const) {
      rmSync(logDir, { recursive: true, force: true });
      expect(runBoth(command).status).toBe(status);
      expectOnePair(command, status);
    }
    // Another shell's -c string ending the same way is logged whole.
    rmSync(logDir, { recursive: true, force: true });
    const command = 'true && eval pwd';
    // stdin not a socket (Node's default pipe): bash would take itself for rshd's and read ~/.bashrc, not BASH_ENV.
    const env = { PATH: process.env.PATH, ...options().env, CCOTEL_STATE_DIR: dir, BASH_ENV: SHELL_SCRIPT };
    const run = spawnSync('bash', ['-c', command], { env, stdio: ['ignore', 'pipe', 'pipe'] });
    expect(run.status).toBe(0);
    expectOnePair(command, 0);
  });

  it('keeps the exit status of a failing command and of exit N', () => {
    expect(runBoth('echo out; false').status).toBe(1);
    expectOnePair('echo out; false', 1);
    rmSync(join(logDir, `${SESSION}.jsonl`));
    expect(runBoth('exit 42').status).toBe(42);
    expectOnePair('exit 42', 42);
  });

  it('leaves PIPESTATUS, BASH_REMATCH, $? and $_ as they were', () => {
    const command = 'echo "[$?][$_]"; declare -p BASH_REMATCH; false | true | (exit 3); echo "ps=${PIPESTATUS[*]}"; true | false; echo "rc=$? ${PIPESTATUS[*]} [$_]"';
    expect(runBoth(command).stdout.toString()).toContain('ps=1 0 3');
    expectOnePair(command, 0);
  });

  it("does not disturb the command's own DEBUG/ERR traps and PROMPT_COMMAND", () => {
    // A DEBUG trap still set when the shell exits also fires once for the EXIT handler (docs/HOOKS.md).
    const command = `trap 'echo "dbg:$BASH_COMMAND" >&2' DEBUG; trap 'echo "err:$?" >&2' ERR; PROMPT_COMMAND='echo pc'; false; echo "$PROMPT_COMMAND"; trap -p DEBUG ERR; trap - DEBUG`;
    const run = runBoth(command);
    expect(run.stderr.toString()).toContain('err:1');
    expectOnePair(command, 0);
  });

  it('waits for background jobs exactly as before', () => {
    const command = 'sleep 0.1 & wait $!; echo "waited=$?"; (exit 4) & wait $!; echo "bg=$?"';
    expect(runBoth(command).stdout.toString()).toBe('waited=0\nbg=4\n');
    expectOnePair(command, 0);
  });

  it('records the shell that starts setsid and nohup children that outlive it', () => {
    const command =
      'setsid sleep 30 >/dev/null 2>&1 </dev/null & echo "setsid=$!"; nohup sleep 30 >/dev/null 2>&1 & echo "nohup=$!"; echo "shell=$$"';
    const run = runLikeBashTool(command, options());
    const pids = Object.fromEntries(
      run.stdout.toString().trim().split('\n').map((line) => line.split('=') as [string, string]).map(([k, v]) => [k, Number(v)]),
    );
    started.push(pids.setsid, pids.nohup);
    expect(run.status).toBe(0);
    expect(run.stderr.toString()).toBe('');
    const [start] = expectOnePair(command, 0);
    expect(start.pid).toBe(pids.shell);
    const [, , pgid, psid] = readFileSync(`/proc/${process.pid}/stat`, 'utf8').split(') ')[1].split(' ');
    expect([start.pgid, start.psid]).toEqual([Number(pgid), Number(psid)]); // inherited from the test runner
    expect(() => process.kill(pids.setsid, 0)).not.toThrow(); // still running after the shell ended
  });

  it('records quotes, backslashes, newlines, control characters and non-ASCII exactly', () => {
    const command = `printf '%s\\n' "a'b\\"c\\\\d" 'ünïcødé ✓ 🚀'\necho "second\tline" # \u0001\u001b[31m\u007f\r`;
    expect(runBoth(command).status).toBe(0);
    expectOnePair(command, 0);
  });

  it('writes nothing in shells without CLAUDE_CODE_SESSION_ID', () => {
    const opts = options();
    const run = runLikeBashTool('echo hi', { ...opts, env: { HOME: dir } });
    expect(run.stdout.toString()).toBe('hi\n');
    expect(readdirSync(logDir)).toEqual([]);
  });

  it('writes nothing for a session id that is not a plain file name', () => {
    const run = runLikeBashTool('echo hi', options({ env: { CLAUDE_CODE_SESSION_ID: '../escape' } }));
    expect(run.stdout.toString()).toBe('hi\n');
    expect(readdirSync(dir).sort()).toEqual(['cwd', 'shell']);
    expect(readdirSync(logDir)).toEqual([]);
  });

  it('carries an inherited TRACEPARENT', () => {
    const traceparent = '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01';
    runLikeBashTool('true', options({ env: { TRACEPARENT: traceparent } }));
    expect(records()[0].tp).toBe(traceparent);
  });

  it('caps a long command so that each record stays one atomic write', () => {
    const command = `echo start # ${'ü✓'.repeat(3000)}`;
    runBoth(command);
    const line = readFileSync(join(logDir, `${SESSION}.jsonl`), 'utf8').split('\n')[0];
    const start = JSON.parse(line) as ShellRecord;
    expect(Buffer.byteLength(line) + 1).toBeLessThanOrEqual(4096); // with its newline
    expect(Buffer.byteLength(line)).toBeGreaterThan(4000);
    expect(command.startsWith(start.cmd!)).toBe(true);
    expect(start.cmdlen).toBe(Buffer.byteLength(command));
  });

  it('keeps every line whole when parallel shells of one session log at once', async () => {
    const shells = Array.from({ length: 8 }, (_, i) => `echo ${i} # ${'é'.repeat(1500)}`);
    await Promise.all(
      shells.map(
        (command) =>
          new Promise((resolve) => {
            const child = spawn('bash', ['-c', bashToolScript(command, options())], {
              env: { PATH: process.env.PATH, HOME: dir, LANG: 'C.UTF-8', CLAUDE_CODE_SESSION_ID: SESSION },
              stdio: 'ignore',
            });
            child.on('close', resolve);
          }),
      ),
    );
    const all = records();
    expect(all.filter((r) => r.ev === 'start').map((r) => r.cmd).sort()).toEqual([...shells].sort());
    expect(all.filter((r) => r.ev === 'end')).toHaveLength(8);
  });

  it('is not thrown off by aliases, functions, nounset or errexit from the shell snapshot', () => {
    const snapshot = join(dir, 'snapshot.sh');
    writeFileSync(
      snapshot,
      [
        'shopt -s expand_aliases',
        "alias printf='echo ALIASED'",
        "alias local='echo LOCAL'",
        'read() { echo fn-read; }',
        'set -o nounset -o errexit',
      ].join('\n'),
    );
    const command = 'echo "$-"; type printf | head -1; true';
    runBoth(command, { snapshot, env: { HOME: '' } });
    rmSync(join(logDir, `${SESSION}.jsonl`));
    runLikeBashTool(command, options({ snapshot }));
    expectOnePair(command, 0);
  });

  it('creates the log directory again when it was removed', () => {
    rmSync(logDir, { recursive: true });
    runLikeBashTool('true', options());
    expectOnePair('true', 0);
  });
});
