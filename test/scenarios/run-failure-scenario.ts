// Runs one failure scenario on the real CLI (print mode, or the TUI in a tmux pane) in the shared HOME, and
// reads back what it planted: the session, the planting call's tool_use_id (from the model server), the
// planted process and the Claude Code process (from the pid files its commands wrote).
import { existsSync, mkdirSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { prepareInteractiveHome, startInteractive } from '../harness/interactive.js';
import { freePort } from '../helpers/free-port.js';
import { startModelServer, type ModelServer } from '../harness/model-server.js';
import { runClaude } from '../harness/run-claude.js';
import type { FailureScenario, InteractiveScript, PrintRun, ScriptStep } from './failure-scenarios.js';

export interface ScenarioRun {
  scenario: FailureScenario;
  home: string;
  projectDir: string;
  sessionId: string;
  port: number;
  plantingToolUseId?: string;
  plantedPid?: number;
  agentPid?: number;
}

export async function runFailureScenario(scenario: FailureScenario, home: string, projectDir: string): Promise<ScenarioRun> {
  mkdirSync(projectDir, { recursive: true });
  const port = await freePort();
  const steps: ScriptStep[] = [];
  const server = await startModelServer([]);
  try {
    const sessionId = scenario.interactive
      ? await runInteractive(scenario.interactive, { home, projectDir, server, steps })
      : await runPrint(scenario.print!({ port }), { home, projectDir, server, steps });
    const plantingStep = steps.findIndex((step) => step.plants);
    const planting = server.requests.find((request) => request.handledAs.kind === 'step' && request.handledAs.index === plantingStep);
    return {
      scenario,
      home,
      projectDir,
      sessionId,
      port,
      plantingToolUseId: planting?.toolUseIds?.[0],
      plantedPid: await readPid(join(projectDir, 'planted.pid')),
      agentPid: await readPid(join(projectDir, 'agent.pid')),
    };
  } finally {
    await server.close();
  }
}

interface RunContext {
  home: string;
  projectDir: string;
  server: ModelServer;
  /** Every step given to the model server, in order (their index is the server's step index). */
  steps: ScriptStep[];
}

async function runPrint(runs: PrintRun[], ctx: RunContext): Promise<string> {
  let sessionId = '';
  for (const run of runs) {
    ctx.steps.push(...run.steps);
    ctx.server.addSteps(run.steps);
    const result = await runClaude({
      home: ctx.home,
      projectDir: ctx.projectDir,
      prompt: run.prompt,
      modelUrl: ctx.server.url,
      allowedTools: ['Bash'],
      resume: run.resume ? sessionId : undefined,
      timeoutMs: 180_000,
    });
    // A CLI killed mid-run writes no result: its session is the one transcript of the project.
    sessionId = result.json?.session_id ?? onlySessionOf(ctx.home, ctx.projectDir);
  }
  return sessionId;
}

async function runInteractive(script: InteractiveScript, ctx: RunContext): Promise<string> {
  prepareInteractiveHome(ctx.home, ctx.projectDir);
  ctx.steps.push(...script.steps);
  ctx.server.addSteps(script.steps);
  // Default mode, so the Bash call asks (2.1.332 starts in auto mode, whose check needs Anthropic's servers).
  const claude = await startInteractive({ home: ctx.home, projectDir: ctx.projectDir, modelUrl: ctx.server.url, args: ['--permission-mode', 'default'] });
  try {
    await claude.acceptApiKey();
    await claude.submit(script.prompt);
    // On a loaded machine the TUI may take text and Enter as one paste: Enter again until the model is asked.
    for (let tries = 0; !ctx.server.requests.some((request) => request.handledAs.kind === 'step') && tries < 20; tries++) {
      await sleep(1_000);
      if (tries % 3 === 2) await claude.press('Enter');
    }
    await claude.waitFor('Do you want to proceed?', { timeoutMs: 60_000 });
    // 1. Yes (this once); Enter again while the prompt stays (a busy TUI can swallow a key).
    for (let presses = 0; presses < 5; presses++) {
      await claude.press('Enter');
      try {
        await claude.waitFor('Do you want to proceed?', { absent: true, timeoutMs: 10_000 });
        break;
      } catch {
        // still asking
      }
    }
    const agentPid = await readPid(join(ctx.projectDir, 'agent.pid'), 120_000);
    if (agentPid === undefined) throw new Error(`the approved Bash command never wrote agent.pid:\n${await claude.screen()}`);
    await claude.waitFor(script.waitFor, { timeoutMs: 60_000 });
    // Let the process watcher see the CLI on its terminal (scans run every second).
    await sleep(3_000);
    if (script.end === 'terminal-dies') {
      // Killed first, so it cannot fire SessionEnd when its terminal hangs up (a hang-up also sends SIGCONT);
      // its window goes a moment later.
      process.kill(agentPid, 'SIGKILL');
      await claude.kill();
    } else {
      await claude.kill(); // the terminal closes: SIGHUP
    }
    return onlySessionOf(ctx.home, ctx.projectDir);
  } finally {
    await claude.kill();
  }
}

/** Claude Code's project folder name: the path with every character other than a letter or digit as '-'. */
function onlySessionOf(home: string, projectDir: string): string {
  const dir = join(home, '.claude', 'projects', projectDir.replace(/[^a-zA-Z0-9]/g, '-'));
  const sessions = existsSync(dir) ? readdirSync(dir).filter((name) => name.endsWith('.jsonl')) : [];
  if (sessions.length !== 1) throw new Error(`expected one transcript in ${dir}, found ${sessions.length}`);
  return sessions[0].replace(/\.jsonl$/, '');
}

async function readPid(path: string, waitMs = 3_000): Promise<number | undefined> {
  for (let waited = 0; ; waited += 100) {
    const pid = existsSync(path) ? Number(readFileSync(path, 'utf8').trim()) : 0;
    if (pid > 0) return pid;
    if (waited >= waitMs) return undefined;
    await sleep(100);
  }
}

/** Kill (by pid) what a scenario left running, if it is still the scenario's process (its environment says so). */
export function killLeftovers(run: ScenarioRun): void {
  for (const pid of [run.plantedPid, run.agentPid]) {
    if (pid === undefined) continue;
    let environ = '';
    try {
      environ = readFileSync(`/proc/${pid}/environ`, 'latin1');
    } catch {
      continue; // gone
    }
    if (!environ.includes(`CLAUDE_CODE_SESSION_ID=${run.sessionId}`) && !environ.includes(`HOME=${run.home}\0`)) continue;
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // gone meanwhile
    }
  }
}
