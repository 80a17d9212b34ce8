import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { startModelServer, type RecordedRequest } from './model-server.js';
import { freePort } from '../helpers/free-port.js';
import { startOtlpReceiver, type OtlpExport } from './otlp-receiver.js';
import type { ClaudeRelease } from './claude-releases.js';
import { copyStdinHookCommand, installHooks, runClaude, type ClaudeRunResult } from './run-claude.js';
import {
  expectationOf,
  SCENARIOS,
  type RunScript,
  type Scenario,
  type ScriptedToolCall,
  type SessionExpectation,
  type SessionScript,
} from './scenarios.js';

// Runs a scenario against the real CLI: one scripted model server per session, sessions at the same
// time when there are several, native telemetry to a receiver, and any background process the
// scenario leaves behind measured and then killed.

export interface ScenarioRunOptions {
  /** HOME for Claude Code; hooks are whatever its ~/.claude/settings.json holds. */
  home: string;
  projectDir: string;
  /** Native telemetry goes here; without it a loopback receiver is started and its exports returned. */
  otlpUrl?: string;
  timeoutMs?: number;
  /** Another release than the pinned devDependency. */
  release?: ClaudeRelease;
  /** Extra environment for the CLI (e.g. OTEL_EXPORTER_OTLP_PROTOCOL=http/protobuf). */
  env?: Record<string, string>;
}

export interface SessionOutcome {
  sessionId: string;
  runs: ClaudeRunResult[];
  /** Every request this session's model server got, in order. */
  requests: RecordedRequest[];
  /** Scripted steps nobody asked for (0 when the CLI followed the script). */
  unusedSteps: number;
  expectation: SessionExpectation;
  /**
   * The same, per session id the CLI gave its runs: one entry when resumes keep the id (2.x), one per
   * run when each resume starts a new session that replays the old one (1.0.x).
   */
  cliSessions: { sessionId: string; expectation: SessionExpectation }[];
}

export interface BackgroundProcess {
  pid: number;
  port: number;
  /** After the session ended: still running, still accepting connections on its port. */
  aliveAfterSession: boolean;
  listening: boolean;
  /** Its environment carries the session's CLAUDE_CODE_SESSION_ID (what orphan detection relies on). */
  inheritedSessionId: string | undefined;
  parentPid: number | undefined;
}

export interface ScenarioOutcome {
  scenario: string;
  projectDir: string;
  sessions: SessionOutcome[];
  /** Native telemetry received (empty when it went to options.otlpUrl). */
  telemetry: OtlpExport[];
  background?: BackgroundProcess;
}

async function runSession(script: SessionScript, options: ScenarioRunOptions & { otlpUrl: string }): Promise<SessionOutcome> {
  const server = await startModelServer([]);
  const runs: ClaudeRunResult[] = [];
  try {
    let sessionId = '';
    const runIds: string[] = [];
    for (const run of script.runs) {
      server.addSteps(run.steps);
      const result = await runClaude({
        home: options.home,
        projectDir: options.projectDir,
        prompt: run.prompt,
        modelUrl: server.url,
        otlpUrl: options.otlpUrl,
        allowedTools: run.allowedTools,
        permissionMode: run.permissionMode,
        release: options.release,
        resume: run.resume ? sessionId : undefined,
        timeoutMs: options.timeoutMs,
        env: options.env,
      });
      runs.push(result);
      // Before 2.x an interrupted print-mode run exits without a result: its transcript names the session.
      const interruptedSession = run.turnOutcome === 'interrupted' ? newestSessionId(options.home, options.projectDir) : undefined;
      if (!result.json && !interruptedSession) {
        throw new Error(
          `claude -p exited ${result.exitCode ?? result.signal} without a JSON result\nstdout: ${result.stdout.slice(0, 2000)}\nstderr: ${result.stderr.slice(0, 2000)}`,
        );
      }
      sessionId = result.json?.session_id ?? interruptedSession!;
      runIds.push(sessionId);
    }
    const written = script.runs.map((run, i) =>
      runs[i].json || transcriptHoldsInterrupt(options, runIds[i]) ? run : asWrittenWithoutResult(run),
    );
    const cliSessions = [...new Set(runIds)].map((id) => ({
      sessionId: id,
      expectation: expectationOf({ runs: written.filter((_, i) => runIds[i] === id) }),
    }));
    return { sessionId, runs, requests: server.requests, unusedSteps: server.remainingSteps(), expectation: expectationOf(script), cliSessions };
  } finally {
    await server.close();
  }
}

/**
 * An interrupted run that printed no result and wrote no interruption (print mode up to 2.1.17 dies on the
 * signal): its transcript holds an unanswered call in a turn that just stops.
 */
function asWrittenWithoutResult(run: RunScript): RunScript {
  const unanswered = (call: ScriptedToolCall): ScriptedToolCall => (call.outcome === 'interrupted' ? { ...call, outcome: 'unanswered' } : call);
  return {
    ...run,
    turnOutcome: run.turnOutcome === 'interrupted' ? 'abandoned' : run.turnOutcome,
    steps: run.steps.map((step) => (step.toolCalls ? { ...step, toolCalls: step.toolCalls.map(unanswered) } : step)),
  };
}

function transcriptDir(home: string, projectDir: string): string {
  return join(home, '.claude', 'projects', projectDir.replace(/[^a-zA-Z0-9]/g, '-'));
}

/** The session's transcript has Claude Code's interruption marker (2.1.332 may write it and print no result). */
function transcriptHoldsInterrupt(options: { home: string; projectDir: string }, sessionId: string): boolean {
  const file = join(transcriptDir(options.home, options.projectDir), `${sessionId}.jsonl`);
  return existsSync(file) && readFileSync(file, 'utf8').includes('[Request interrupted by user');
}

/** The session id of the newest transcript of `projectDir` under `home`. */
function newestSessionId(home: string, projectDir: string): string | undefined {
  const dir = transcriptDir(home, projectDir);
  if (!existsSync(dir)) return undefined;
  const transcripts = readdirSync(dir)
    .filter((f) => f.endsWith('.jsonl') && !f.startsWith('agent-'))
    .map((f) => ({ id: f.slice(0, -'.jsonl'.length), mtime: statSync(join(dir, f)).mtimeMs }))
    .sort((a, b) => b.mtime - a.mtime);
  return transcripts[0]?.id;
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

function accepts(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

function procField(pid: number, read: (text: string) => string | undefined, file: string): string | undefined {
  try {
    return read(readFileSync(`/proc/${pid}/${file}`, 'utf8'));
  } catch {
    return undefined;
  }
}

async function readPid(pidFile: string): Promise<number> {
  for (let waited = 0; waited < 5000; waited += 100) {
    try {
      const pid = Number(readFileSync(pidFile, 'utf8').trim());
      if (pid > 0) return pid;
    } catch {
      // not written yet
    }
    await sleep(100);
  }
  throw new Error(`the background process never wrote ${pidFile}`);
}

async function inspectBackground(pid: number, port: number): Promise<BackgroundProcess> {
  return {
    pid,
    port,
    aliveAfterSession: isAlive(pid),
    listening: await accepts(port),
    inheritedSessionId: procField(pid, (t) => t.split('\0').find((v) => v.startsWith('CLAUDE_CODE_SESSION_ID='))?.split('=')[1], 'environ'),
    parentPid: Number(procField(pid, (t) => /^PPid:\s*(\d+)/m.exec(t)?.[1], 'status')) || undefined,
  };
}

/** Kills a process the harness left behind, by pid, and waits until it is gone. */
export async function killProcess(pid: number): Promise<void> {
  if (!isAlive(pid)) return;
  process.kill(pid, 'SIGTERM');
  for (let waited = 0; waited < 3000 && isAlive(pid); waited += 50) await sleep(50);
  if (isAlive(pid)) process.kill(pid, 'SIGKILL');
}

export async function runScenario(scenario: Scenario, options: ScenarioRunOptions): Promise<ScenarioOutcome> {
  mkdirSync(options.projectDir, { recursive: true });
  for (const [name, content] of Object.entries(scenario.projectFiles ?? {})) {
    mkdirSync(dirname(join(options.projectDir, name)), { recursive: true });
    writeFileSync(join(options.projectDir, name), content);
  }
  const port = await freePort();
  const scripts = scenario.sessions({ projectDir: options.projectDir, port, version: options.release?.version });
  const receiver = options.otlpUrl ? undefined : await startOtlpReceiver();
  const otlpUrl = options.otlpUrl ?? receiver!.url;
  const pidFile = scenario.backgroundPidFile && join(options.projectDir, scenario.backgroundPidFile);
  let backgroundPid: number | undefined;
  try {
    const sessions = await Promise.all(scripts.map((script) => runSession(script, { ...options, otlpUrl })));
    let background: BackgroundProcess | undefined;
    if (pidFile) {
      backgroundPid = await readPid(pidFile);
      background = await inspectBackground(backgroundPid, port);
    }
    return { scenario: scenario.name, projectDir: options.projectDir, sessions, telemetry: receiver?.exports ?? [], background };
  } finally {
    if (pidFile && backgroundPid === undefined) {
      // The run failed before the pid was read: still find and stop the server if it started.
      backgroundPid = await readPid(pidFile).catch(() => undefined);
    }
    if (backgroundPid !== undefined) await killProcess(backgroundPid);
    await receiver?.close();
  }
}

export interface AllScenariosOptions {
  /** Hook command installed on every hook event; default: copy each payload into `<workDir>/hooks`. */
  hookCommand?: string;
  /** Native telemetry destination (e.g. the real collector); default: a loopback receiver per scenario. */
  otlpUrl?: string;
  /** Where the scenarios' project directories go; default: a new temp dir. */
  workDir?: string;
}

/**
 * Runs every scenario, one after the other, as one user whose HOME is `targetHome`: afterwards
 * `targetHome/.claude/projects` holds real transcripts for each scenario's project.
 */
export async function runAllScenarios(targetHome: string, options: AllScenariosOptions = {}): Promise<ScenarioOutcome[]> {
  const workDir = options.workDir ?? mkdtempSync(join(tmpdir(), 'ccotel-scenarios-'));
  let hookCommand = options.hookCommand;
  if (!hookCommand) {
    mkdirSync(join(workDir, 'hooks'), { recursive: true });
    hookCommand = copyStdinHookCommand(join(workDir, 'hooks'));
  }
  installHooks(targetHome, hookCommand);
  const outcomes: ScenarioOutcome[] = [];
  for (const scenario of SCENARIOS) {
    outcomes.push(
      await runScenario(scenario, { home: targetHome, projectDir: join(workDir, 'projects', scenario.name), otlpUrl: options.otlpUrl }),
    );
  }
  return outcomes;
}
