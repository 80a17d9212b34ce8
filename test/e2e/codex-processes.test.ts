// The failure-mode detectors on the real Codex CLI of each cached release (codex-releases.ts; none: skipped, failing
// under CI), `ccotel run` following its rollouts, hooks and process table live: a command that leaves a detached
// server listening on loopback is reported under its Codex thread and call as orphan_process and approval_scope
// (listening); a Codex process SIGKILLed while its command runs is an abandoned_session (killed) naming it; a run
// that ends normally is not abandoned. Every process a test leaves is killed by pid.
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, describe, expect, it } from 'vitest';
import { codexReleasesForTests } from '../harness/codex-releases.js';
import { startResponsesServer, type ResponsesServer } from '../harness/responses-server.js';
import { runCodex, threadIdOf, writeCodexConfig } from '../harness/run-codex.js';
import { skipWithout } from '../helpers/real-parts.js';
import { assertBuilt, CLI, cliEnv, runProcess, startRun, stopRun } from '../reliability/cli.js';
import { storeCli } from './store-cli.js';

const usage = { input_tokens: 1000, cached_input_tokens: 0, output_tokens: 10, reasoning_output_tokens: 0 };
const shell = (cmd: string) => ({ calls: [{ name: 'exec_command', arguments: { cmd } }], usage });
/** Scans this often: the detections come within seconds of what they see. */
const SCAN_INTERVAL_MS = 500;

interface Detection {
  mode: string;
  sessionId: string;
  toolUseId: string;
  pid: string;
  port: string;
  cause: string;
  commandLine: string;
}

const left: number[] = [];
const dirs: string[] = [];
afterAll(() => {
  for (const pid of left) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // already gone
    }
  }
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

async function waitFor<T>(what: string, probe: () => Promise<T | undefined> | T | undefined, timeoutMs = 60_000): Promise<T> {
  for (const deadline = Date.now() + timeoutMs; ; await sleep(250)) {
    const found = await probe();
    if (found !== undefined) return found;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
  }
}

/** `codex exec` started, not awaited: the test kills it. */
function startCodex(binary: string, codexHome: string, cwd: string, prompt: string) {
  const args = ['exec', '--json', '--skip-git-repo-check', '--dangerously-bypass-approvals-and-sandbox', prompt];
  const env = { PATH: process.env.PATH, HOME: codexHome, CODEX_HOME: codexHome, TMPDIR: process.env.TMPDIR, LANG: 'C.UTF-8', RUST_LOG: 'error' };
  const child = spawn(binary, args, { cwd, env, stdio: ['ignore', 'pipe', 'ignore'] });
  let stdout = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  return { child, stdout: () => stdout, exited: new Promise((resolve) => child.on('exit', resolve)) };
}

describe.each(codexReleasesForTests())('failure modes on Codex $version, ccotel run live beside it', ({ binary, missing }) => {
  it.skipIf(skipWithout(missing))(
    'reports a server left listening after its call under its thread and call, and a killed Codex as abandoned; a normal exit is not',
    async () => {
      assertBuilt();
      const home = mkdtempSync(join(tmpdir(), 'ccotel-codex-processes-'));
      dirs.push(home);
      const codexHome = join(home, 'codex');
      const project = join(home, 'project');
      mkdirSync(project);
      const env = cliEnv(home);
      const store = join(home, 'store');
      let server: ResponsesServer | undefined;
      let run: ReturnType<typeof startRun> | undefined;
      try {
        server = await startResponsesServer([]);
        writeCodexConfig(codexHome, server.url);
        // The hooks tell a session's liveness (a session seen through hooks and gone without SessionEnd is abandoned).
        const installed = await runProcess(process.execPath, [CLI, 'install-hooks', '--agent', 'codex', '--codex-home', codexHome], env);
        expect(installed.status, installed.stderr).toBe(0);
        run = startRun(['--store', store, '--codex-home', codexHome, '--scan-interval', String(SCAN_INTERVAL_MS)], env);
        await waitFor('ccotel run to start', () => (run!.output().includes('following transcripts') ? true : undefined));
        const detections = async (sessionId: string) =>
          storeCli(store, () => env).query<Detection>(
            `SELECT LogAttributes['mode'] AS mode, LogAttributes['session.id'] AS sessionId, LogAttributes['tool_use_id'] AS toolUseId,
               LogAttributes['process.pid'] AS pid, LogAttributes['network.local.port'] AS port, LogAttributes['cause'] AS cause,
               LogAttributes['process.command_line'] AS commandLine
             FROM otel_logs WHERE EventName = 'ccotel.failure_mode.detected' AND LogAttributes['session.id'] = '${sessionId}'
             ORDER BY mode LIMIT 1 BY LogAttributes['ccotel.record.id']`,
          );

        // A command that starts a server detached from the call (setsid: Codex kills the process group of a command
        // as it ends, so a plain `nohup … &` goes with it), and Codex exits. The command ends only once the server
        // listens: until its setsid the server is still in that group (under load, CI saw it killed before it began).
        const portFile = join(home, 'port');
        const listen = `require("net").createServer().listen(0, "127.0.0.1", function () { require("fs").writeFileSync(${JSON.stringify(portFile)}, process.pid + " " + this.address().port); })`;
        const detached = `setsid nohup ${process.execPath} -e '${listen}' >/dev/null 2>&1 &`;
        const untilListening = `for i in $(seq 600); do [ -s ${portFile} ] && break; sleep 0.1; done; echo started`;
        server.addSteps([shell(`${detached} ${untilListening}`), { text: 'Started.', usage }]);
        const served = await runCodex({ binary: binary!, codexHome, cwd: project, prompt: 'start the server' });
        expect(served.code, served.stderr).toBe(0);
        const thread = threadIdOf(served.stdout)!;
        const [pid, port] = (await waitFor('the server', () => (existsSync(portFile) ? readFileSync(portFile, 'utf8') || undefined : undefined))).split(' ');
        left.push(Number(pid));
        const callId = server.requests.flatMap((request) => request.callIds ?? [])[0];
        const found = await waitFor('orphan_process and approval_scope', async () => {
          const rows = await detections(thread);
          return rows.some((row) => row.mode === 'orphan_process') && rows.some((row) => row.mode === 'approval_scope') ? rows : undefined;
        });
        const orphan = found.find((row) => row.mode === 'orphan_process')!;
        const scope = found.find((row) => row.mode === 'approval_scope')!;
        expect(orphan).toMatchObject({ sessionId: thread, toolUseId: callId, pid, port });
        expect(orphan.commandLine).toContain('createServer');
        expect(scope).toMatchObject({ sessionId: thread, toolUseId: callId, pid, port, cause: 'listening' });

        // A Codex killed while its command runs (seen alive by a scan first: its agent), and its session's SessionEnd
        // never comes.
        const pidFile = join(home, 'sleeper');
        server.addSteps([shell(`sleep 60 & echo $! > ${pidFile}; wait`)]);
        const doomed = startCodex(binary!, codexHome, project, 'wait a minute');
        const sleeper = Number(await waitFor('the command', () => (existsSync(pidFile) ? readFileSync(pidFile, 'utf8').trim() || undefined : undefined)));
        left.push(sleeper);
        await sleep(3 * SCAN_INTERVAL_MS);
        doomed.child.kill('SIGKILL');
        await doomed.exited;
        const killedThread = threadIdOf(doomed.stdout())!;
        const abandoned = await waitFor('abandoned_session', async () => (await detections(killedThread)).find((row) => row.mode === 'abandoned_session'));
        expect(abandoned).toMatchObject({ sessionId: killedThread, pid: String(doomed.child.pid), cause: 'killed' });

        // The run that ended normally: long enough gone for an abandonment to show, none.
        expect((await detections(thread)).map((row) => row.mode)).toEqual(['approval_scope', 'orphan_process']);
      } finally {
        expect(await stopRun(run)).toBe(0);
        await server?.close();
      }
    },
    180_000,
  );
});
