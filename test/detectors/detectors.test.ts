// Failure-mode detectors on real processes: commands run by real bash the way Claude Code's Bash tool runs them
// (shell integration on, CLAUDE_CODE_SESSION_ID and CLAUDE_PID in their environment), transcripts of the calls,
// hook events, and real /proc scans. Every process a test starts is killed by pid afterwards.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { TelemetryBatch } from '../../sidecar/src/model.js';
import { Pipeline } from '../../sidecar/src/pipeline.js';
import { HookCorrelator } from '../../sidecar/src/processors/correlate-hooks.js';
import type { HookEvent } from '../../sidecar/src/records/hook-spool.js';
import { ShellCorrelator } from '../../sidecar/src/processors/correlate-shell.js';
import { TranscriptCorrelator } from '../../sidecar/src/processors/transcripts/correlator.js';
import { ABANDON_GRACE_MS } from '../../sidecar/src/processors/detectors/abandoned-session.js';
import { FailureModeDetector } from '../../sidecar/src/processors/detectors/index.js';
import { parseTranscriptLine } from '../../sidecar/src/processors/parse-transcript.js';
import { scanProcesses } from '../../sidecar/src/sources/process-watcher.js';
import { ShellLogSource } from '../../sidecar/src/sources/shell-log-source.js';
import { bashToolScript, SHELL_SCRIPT } from '../hook/run.js';
import { MemorySink } from '../helpers/memory-sink.js';

const started: number[] = [];
afterEach(() => {
  for (const pid of started.splice(0)) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // already gone
    }
  }
});

const alive = (pid: number) => existsSync(`/proc/${pid}`);

async function waitFor<T>(read: () => T | undefined, what: string, timeoutMs = 10_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = read();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** One sidecar's worth of correlation, with a shell log dir and the hook/transcript inputs fed by hand. */
function harness() {
  const dir = mkdtempSync(join(tmpdir(), 'ccotel-detect-'));
  const shellDir = join(dir, 'shell');
  const sink = new MemorySink();
  const detector = new FailureModeDetector({ idleMs: 30 * 60_000 });
  const hooks = new HookCorrelator({ contentLevel: 'masked', listeners: [detector.onHook] });
  const shell = new ShellCorrelator();
  const transcripts = new TranscriptCorrelator();
  const pipeline = new Pipeline(transcripts, [], [sink], [hooks, shell, detector]);
  const shellLog = new ShellLogSource({ dir: shellDir, emit: (read, ack) => shell.addRecords(read, ack), skipRecord: (record) => pipeline.skipRecord(record) });
  let hookIndex = 0;
  let row = 0;
  const envLine = `__ccotel_shell_log_dir='${shellDir}'; . '${SHELL_SCRIPT}'`;
  return {
    dir,
    detector,
    envLine,
    hook(sessionId: string, name: string, timeMs: number, extra: object = {}) {
      const file = `${String(BigInt(timeMs) * 1_000_000n + BigInt(hookIndex)).padStart(20, '0')}-${hookIndex++}-00000000.json`;
      const event: HookEvent = { file, firedAtMs: timeMs, firedAtNs: file.slice(0, 20), hookPid: 1, payload: { session_id: sessionId, hook_event_name: name, ...extra }, ack: () => {} };
      hooks.add(event);
    },
    /** A prompt, a Bash call open from `fromMs` to `toMs`, and its result. */
    transcript(sessionId: string, toolUseId: string, command: string, fromMs: number, toMs: number, result: { isError?: boolean; interrupted?: boolean } = {}) {
      const at = (ms: number) => new Date(ms).toISOString();
      const rows = [
        { type: 'user', uuid: `p-${toolUseId}`, sessionId, timestamp: at(fromMs - 10), message: { role: 'user', content: `run ${toolUseId}` } },
        { type: 'assistant', uuid: `a-${toolUseId}`, sessionId, timestamp: at(fromMs - 5), requestId: `req-${toolUseId}`, message: { id: `msg-${toolUseId}`, model: 'm', role: 'assistant', content: [{ type: 'tool_use', id: toolUseId, name: 'Bash', input: { command } }], usage: { input_tokens: 1, output_tokens: 1 } } },
        { type: 'user', uuid: `r-${toolUseId}`, sessionId, timestamp: at(toMs + 5), toolUseResult: { stdout: '', stderr: '', interrupted: result.interrupted ?? false }, message: { role: 'user', content: [{ type: 'tool_result', tool_use_id: toolUseId, content: result.interrupted ? '[Request interrupted by user for tool use]' : 'ok', is_error: result.isError ?? false }] } },
      ];
      for (const value of rows) {
        const parsed = parseTranscriptLine(JSON.stringify({ parentUuid: null, isSidechain: false, ...value }));
        if (parsed.ok === true) transcripts.add(parsed.entry, { path: `/t/${sessionId}.jsonl`, kind: 'main' }, row++);
      }
    },
    /** Read the shell log, close the turns, deliver; then look at /proc as it will be `laterMs` from now. */
    async scan(laterMs = 5_000) {
      await shellLog.readAll();
      transcripts.finish();
      await pipeline.flush();
      detector.onScan(scanProcesses({ nowMs: Date.now() + laterMs }));
      await pipeline.flush();
      return sink.received;
    },
  };
}

/** Runs a command the way the Bash tool does (a fresh bash, its own process group), waiting for it to exit. */
function runTool(command: string, sessionId: string, envLine: string, agentPid = process.pid) {
  const fromMs = Date.now();
  const run = spawnSync('bash', ['-c', bashToolScript(command, { envFileLine: envLine, cwdFile: '/dev/null' })], {
    env: { PATH: process.env.PATH, CLAUDE_CODE_SESSION_ID: sessionId, CLAUDE_PID: String(agentPid) },
    timeout: 20_000,
  });
  return { fromMs, toMs: Date.now(), status: run.status };
}

const detected = (received: TelemetryBatch, sessionId: string) =>
  received.logs.filter((log) => log.eventName === 'ccotel.failure_mode.detected' && log.attributes['session.id'] === sessionId);

describe('failure-mode detectors on real processes', () => {
  it('a tool call that leaves a setsid listener on a loopback port: orphan_process and approval_scope; a well-behaved call and a slow hook: nothing', async () => {
    const h = harness();
    const noisy = 'cccccccc-0000-4000-8000-000000000001';
    const quiet = 'cccccccc-0000-4000-8000-000000000002';
    const portFile = join(h.dir, 'port');
    const server = `require("net").createServer().listen(0, "127.0.0.1", function () { require("fs").writeFileSync(${JSON.stringify(portFile)}, process.pid + " " + this.address().port); })`;
    const command = `setsid nohup ${process.execPath} -e '${server}' >/dev/null 2>&1 & echo started`;
    const call = runTool(command, noisy, h.envLine);
    const [pid, port] = (await waitFor(() => (existsSync(portFile) ? readFileSync(portFile, 'utf8') || undefined : undefined), 'the listener')).split(' ').map(Number);
    started.push(pid);
    const good = runTool('sleep 0.05; echo fine | wc -c', quiet, h.envLine);
    // A slow hook of the quiet session, fired as its call ended, still running: a hook's, not the call's.
    const hook = spawn('sleep', ['30'], { env: { PATH: process.env.PATH, CLAUDE_CODE_SESSION_ID: quiet, CLAUDE_PID: String(process.pid), CLAUDE_PROJECT_DIR: h.dir }, stdio: 'ignore' });
    started.push(hook.pid!);
    expect([call.status, good.status]).toEqual([0, 0]);
    h.hook(noisy, 'SessionStart', call.fromMs - 100, { source: 'startup' });
    h.hook(quiet, 'SessionStart', good.fromMs - 100, { source: 'startup' });
    h.transcript(noisy, 'toolu_listener', command, call.fromMs, call.toMs);
    h.transcript(quiet, 'toolu_fine', 'sleep 0.05; echo fine | wc -c', good.fromMs, good.toMs);
    const received = await h.scan();

    const found = detected(received, noisy);
    expect(found.map((log) => log.attributes.mode).sort()).toEqual(['approval_scope', 'orphan_process']);
    // Both name the port: the orphaned-listener alert (dashboards/alerts/sigma) reads it on the orphan_process record.
    for (const log of found) {
      expect(log.attributes).toMatchObject({ tool_use_id: 'toolu_listener', 'process.pid': pid, 'network.local.port': port });
      expect(String(log.attributes['process.command_line'])).toContain('createServer');
    }
    expect(found.find((log) => log.attributes.mode === 'approval_scope')!.attributes['network.local.port']).toBe(port);
    expect(received.metrics.filter((point) => point.name === 'ccotel.failure_modes').map((point) => point.attributes.mode).sort()).toEqual(['approval_scope', 'orphan_process']);
    expect(detected(received, quiet)).toEqual([]);
    // A re-scan of the same processes reports nothing new.
    const before = received.logs.length;
    h.detector.onScan(scanProcesses({ nowMs: Date.now() + 6_000 }));
    expect(h.detector.drain().events).toHaveLength(0);
    expect(received.logs.length).toBe(before);
  });

  it('an interrupted command whose child keeps running: signal_propagation', async () => {
    const h = harness();
    const session = 'cccccccc-0000-4000-8000-000000000003';
    const pidFile = join(h.dir, 'child');
    const command = `sleep 300 & echo $! > ${pidFile}; wait`;
    const fromMs = Date.now();
    const shell: ChildProcess = spawn('bash', ['-c', bashToolScript(command, { envFileLine: h.envLine, cwdFile: '/dev/null' })], {
      env: { PATH: process.env.PATH, CLAUDE_CODE_SESSION_ID: session, CLAUDE_PID: String(process.pid) },
      stdio: 'ignore',
      detached: true, // its own process group, as the Bash tool's shells are
    });
    started.push(shell.pid!);
    const child = Number(await waitFor(() => (existsSync(pidFile) ? readFileSync(pidFile, 'utf8').trim() || undefined : undefined), 'the child'));
    started.push(child);
    // The user interrupts: the shell is killed, its child is not.
    process.kill(shell.pid!, 'SIGKILL');
    await waitFor(() => (alive(shell.pid!) && readFileSync(`/proc/${shell.pid}/stat`, 'utf8').split(') ')[1]?.[0] !== 'Z' ? undefined : true), 'the shell to die');
    const toMs = Date.now();
    expect(alive(child)).toBe(true);
    h.hook(session, 'SessionStart', fromMs - 100, { source: 'startup' });
    h.hook(session, 'PostToolUseFailure', toMs, { tool_name: 'Bash', tool_use_id: 'toolu_interrupted', error: 'Interrupted', is_interrupt: true, duration_ms: toMs - fromMs });
    h.transcript(session, 'toolu_interrupted', command, fromMs, toMs, { isError: true, interrupted: true });
    const received = await h.scan();
    const signal = detected(received, session).filter((log) => log.attributes.mode === 'signal_propagation');
    expect(signal).toHaveLength(1);
    expect(signal[0].attributes).toMatchObject({ tool_use_id: 'toolu_interrupted', 'process.pid': child, 'process.command_line': 'sleep 300' });
  });

  it('a session whose Claude Code process is SIGKILLed with no SessionEnd: abandoned_session (killed); one that ends: nothing', async () => {
    const h = harness();
    const killed = 'cccccccc-0000-4000-8000-000000000004';
    const ended = 'cccccccc-0000-4000-8000-000000000005';
    // A stand-in agent: a process that runs one Bash-tool command (its child), then stays (or exits).
    const agent = (sessionId: string, then: string) =>
      spawn('bash', ['-c', `bash -c ${shellQuote(bashToolScript('echo hi', { envFileLine: h.envLine, cwdFile: '/dev/null' }))}; ${then}`], {
        env: { PATH: process.env.PATH, CLAUDE_CODE_SESSION_ID: sessionId },
        stdio: 'ignore',
      });
    const t0 = Date.now();
    const doomed = agent(killed, 'exec sleep 300');
    started.push(doomed.pid!);
    const polite = agent(ended, 'exit 0');
    await new Promise((resolve) => polite.on('exit', resolve));
    await waitFor(() => (existsSync(join(h.dir, 'shell', `${killed}.jsonl`)) && readFileSync(join(h.dir, 'shell', `${killed}.jsonl`), 'utf8').includes('"end"') ? true : undefined), 'the command');
    h.hook(killed, 'SessionStart', t0 - 100, { source: 'startup' });
    h.hook(ended, 'SessionStart', t0 - 100, { source: 'startup' });
    h.hook(ended, 'SessionEnd', Date.now(), { reason: 'prompt_input_exit' });
    h.transcript(killed, 'toolu_a', 'echo hi', t0, Date.now());
    h.transcript(ended, 'toolu_b', 'echo hi', t0, Date.now());
    // While the agent lives, nothing is abandoned.
    let received = await h.scan(0);
    expect(detected(received, killed)).toEqual([]);
    process.kill(doomed.pid!, 'SIGKILL');
    await new Promise((resolve) => doomed.on('exit', resolve));
    h.detector.onScan(scanProcesses());
    received = await h.scan(ABANDON_GRACE_MS);
    const abandoned = detected(received, killed);
    expect(abandoned.map((log) => [log.attributes.mode, log.attributes.cause])).toEqual([['abandoned_session', 'killed']]);
    expect(detected(received, ended)).toEqual([]);
    const ends = received.logs.filter((log) => log.eventName === 'ccotel.session.ended').map((log) => [log.attributes['session.id'], log.attributes.reason]);
    expect(ends.sort()).toEqual([[killed, 'abandoned'], [ended, 'prompt_input_exit']].sort());
  });
});

function shellQuote(text: string): string {
  return `'${text.replaceAll("'", `'"'"'`)}'`;
}
