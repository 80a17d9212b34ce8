// The scenario the Codex fixtures are recorded from, and its recording: the real CLI of one release driven offline by
// the scripted Responses API. A fixture folder is a CODEX_HOME holding only `sessions/` (the rollouts), plus what the
// CLI printed (`exec-<n>.jsonl`, its --json events) and what the server answered (`server.json`).
import { cpSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { compareVersions } from './claude-releases.js';
import { SPAWNED, startResponsesServer, type ResponsesStep, type ResponsesUsage } from './responses-server.js';
import { runCodex, threadIdOf, writeCodexConfig } from './run-codex.js';

const usage = (input: number, cached: number, output: number, reasoning: number): ResponsesUsage => ({
  input_tokens: input,
  cached_input_tokens: cached,
  output_tokens: output,
  reasoning_output_tokens: reasoning,
});
const shell = (cmd: string) => ({ name: 'exec_command', arguments: { cmd } });
/** The subagent tools: plain functions up to 0.132, in the `multi_agent_v1` namespace from 0.133 (bisected: 0.132 refuses the namespaced call, 0.133 and 0.150 the plain one). */
const MULTI_AGENT = 'multi_agent_v1';
const FIRST_NAMESPACED = '0.133.0';

/** Whether the release's subagent tools are in their namespace. */
export const agentToolsNamespaced = (version: string) => compareVersions(version, FIRST_NAMESPACED) >= 0;
const agentTool = (name: string, args: Record<string, unknown>) => ({ name, namespace: MULTI_AGENT, arguments: args });

/**
 * One `codex exec` run: a new thread, a resume of the thread of run `resumes`, or a fork of it (`forks`, a new thread;
 * releases from `since` on); its steps are the server's answers.
 */
export interface Run {
  prompt: string;
  resumes?: number;
  forks?: number;
  since?: string;
  /** Interrupted (Ctrl-C) this long after its command started, while it runs. */
  interruptAfterMs?: number;
  steps: ResponsesStep[];
}

export const CODEX_SCENARIO: Run[] = [
  { prompt: 'say hello', steps: [{ text: 'Hello there.', usage: usage(1200, 0, 18, 0) }] },
  {
    prompt: 'check the project',
    steps: [
      { calls: [shell('echo checked')], usage: usage(2100, 1024, 40, 16) },
      { calls: [shell('ls does-not-exist')], usage: usage(2300, 2048, 35, 0) },
      { text: 'One check failed.', usage: usage(2500, 2048, 22, 8) },
    ],
  },
  {
    prompt: 'try both at once',
    resumes: 1,
    steps: [
      { calls: [shell('echo one'), shell('exit 3')], usage: usage(2900, 2304, 60, 24) },
      { text: 'The second one exits 3.', usage: usage(3200, 2816, 25, 0) },
    ],
  },
  {
    prompt: 'and now?',
    forks: 1,
    since: '0.171.0',
    steps: [
      { calls: [shell('echo forked')], usage: usage(3500, 3072, 30, 0) },
      { text: 'Forked.', usage: usage(3700, 3328, 12, 4) },
    ],
  },
  {
    prompt: 'ask a helper',
    steps: [
      { calls: [agentTool('spawn_agent', { message: 'Say hi.' })], usage: usage(1500, 0, 20, 0) },
      { subagent: true, text: 'Hi.', usage: usage(900, 0, 6, 0) },
      { calls: [agentTool('wait_agent', { targets: SPAWNED, timeout_ms: 30_000 })], usage: usage(1700, 1024, 18, 0) },
      // The helper's completion notice reaches the thread as it ends: a second here and it is in the next request,
      // not a request of its own after the last answer (which made the run's request count vary).
      { calls: [shell('sleep 1')], usage: usage(1800, 1280, 12, 0) },
      { text: 'The helper said hi.', usage: usage(1900, 1536, 9, 0) },
    ],
  },
  { prompt: 'wait for it', interruptAfterMs: 1000, steps: [{ calls: [shell('sleep 30')], usage: usage(1300, 0, 14, 0) }] },
];

/** The runs a release can make. */
export function scenarioOf(version: string): Run[] {
  const namespaced = agentToolsNamespaced(version);
  return CODEX_SCENARIO.filter((run) => run.since === undefined || compareVersions(version, run.since) >= 0).map((run) => ({
    ...run,
    steps: run.steps.map((step) => (step.calls && !namespaced ? { ...step, calls: step.calls.map(({ namespace: _, ...call }) => call) } : step)),
  }));
}

/** Runs the scenario with the `binary` of `version` and leaves its fixture folder in `out` (emptied first). */
export async function recordCodex(binary: string, version: string, out: string): Promise<void> {
  const work = mkdtempSync(join(tmpdir(), 'ccotel-codex-record-'));
  try {
    const codexHome = join(work, 'codex-home');
    const project = join(work, 'project');
    mkdirSync(project);
    const server = await startResponsesServer([]);
    writeCodexConfig(codexHome, server.url);
    rmSync(out, { recursive: true, force: true });
    mkdirSync(out, { recursive: true });
    const threads: string[] = [];
    const scenario = scenarioOf(version);
    for (const [n, run] of scenario.entries()) {
      server.addSteps(run.steps);
      const resume = run.resumes === undefined ? undefined : threads[run.resumes];
      const fork = run.forks === undefined ? undefined : threads[run.forks];
      const result = await runCodex({ binary, codexHome, cwd: project, prompt: run.prompt, resume, fork, interruptAfterMs: run.interruptAfterMs });
      if ((result.code !== 0 && run.interruptAfterMs === undefined) || server.remainingSteps() !== 0) throw new Error(`codex ${version} run ${n} exited ${result.code}, ${server.remainingSteps()} steps left:\n${result.stderr}\n${result.stdout.slice(-1500)}`);
      threads.push(resume ?? threadIdOf(result.stdout) ?? '');
      writeFileSync(join(out, `exec-${n}.jsonl`), result.stdout);
    }
    await server.close();
    const answered = server.requests.filter((request) => request.step !== undefined).map(({ step, responseId, callIds }) => ({ step, responseId, callIds }));
    writeFileSync(join(out, 'server.json'), JSON.stringify({ version, scenario, threads, answered }, null, 2) + '\n');
    cpSync(join(codexHome, 'sessions'), join(out, 'sessions'), { recursive: true });
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

