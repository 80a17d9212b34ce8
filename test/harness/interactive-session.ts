import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { startInteractive, prepareInteractiveHome, type InteractiveClaude } from './interactive.js';
import { startModelServer, type RecordedRequest, type Step } from './model-server.js';
import { startOtlpReceiver, type OtlpExport } from './otlp-receiver.js';
import { copyStdinHookCommand, installHooks, readHookPayloads, type HookPayload } from './run-claude.js';

// One interactive Claude Code session, set up as print mode's are (temp HOME with a hook on every event
// copying its payload, scripted model server, loopback OTLP receiver) and driven by a function that
// presses keys. Afterwards the transcripts are in `<root>/home/.claude/projects`.

export interface InteractiveSessionOptions {
  /** Work directory: `home/`, `project/` and `hooks/` are made (afresh) under it. */
  root: string;
  /** The model's script: every step the main loop asks for, in order, over all restarts. */
  steps: Step[];
  /** Extra CLI arguments for the start (e.g. `--permission-mode default`). */
  args?: string[];
  /** Presses keys; the API key prompt is already answered. End with `/exit` so telemetry is flushed. */
  drive(claude: InteractiveClaude, context: DriveContext): Promise<void>;
  /** Settings merged into `~/.claude/settings.json` besides the hooks (e.g. permission rules). */
  settings?: Record<string, unknown>;
  /** Files created in the project before the start. */
  projectFiles?: Record<string, string>;
  /** Native telemetry goes here; without it a loopback receiver is started and its exports returned. */
  otlpUrl?: string;
}

export interface DriveContext {
  home: string;
  projectDir: string;
  /** Starts another CLI in the same HOME and project (e.g. `claude --resume <id>`), answering its API key prompt. */
  restart(args?: string[]): Promise<InteractiveClaude>;
  /** Requests the model server has received so far. */
  requests: RecordedRequest[];
}

export interface InteractiveOutcome {
  home: string;
  projectDir: string;
  hookDir: string;
  hooks: HookPayload[];
  requests: RecordedRequest[];
  telemetry: OtlpExport[];
  unusedSteps: number;
  /** Exit status of each CLI started, in order (undefined: it was still running and got killed). */
  exitStatuses: (number | undefined)[];
}

/** Adds `settings` to ~/.claude/settings.json; hooks are added to the copying hook of each event. */
function mergeSettings(home: string, settings: Record<string, unknown>): void {
  const file = join(home, '.claude', 'settings.json');
  const current = JSON.parse(readFileSync(file, 'utf8')) as { hooks: Record<string, unknown[]> };
  const extraHooks = (settings.hooks ?? {}) as Record<string, unknown[]>;
  const hooks = { ...current.hooks };
  for (const [event, matchers] of Object.entries(extraHooks)) hooks[event] = [...(hooks[event] ?? []), ...matchers];
  writeFileSync(file, JSON.stringify({ ...current, ...settings, hooks }, null, 2) + '\n');
}

/** Where a session rooted at `root` keeps its HOME, project and copied hook payloads. */
export function sessionDirs(root: string): { home: string; projectDir: string; hookDir: string } {
  return { home: join(root, 'home'), projectDir: join(root, 'project'), hookDir: join(root, 'hooks') };
}

/** Telemetry export intervals are ≤ 1 s; after an exit, give the last export a moment to land. */
const TELEMETRY_SETTLE_MS = 1500;

export async function runInteractiveSession(options: InteractiveSessionOptions): Promise<InteractiveOutcome> {
  rmSync(options.root, { recursive: true, force: true });
  const { home, projectDir, hookDir } = sessionDirs(options.root);
  mkdirSync(projectDir, { recursive: true });
  mkdirSync(hookDir, { recursive: true });
  for (const [name, content] of Object.entries(options.projectFiles ?? {})) {
    writeFileSync(join(projectDir, name), content);
  }
  prepareInteractiveHome(home, projectDir);
  installHooks(home, copyStdinHookCommand(hookDir));
  if (options.settings) mergeSettings(home, options.settings);

  const server = await startModelServer(options.steps);
  const receiver = options.otlpUrl ? undefined : await startOtlpReceiver();
  const otlpUrl = options.otlpUrl ?? receiver!.url;
  const started: InteractiveClaude[] = [];
  const start = async (args: string[] = []) => {
    const claude = await startInteractive({ home, projectDir, modelUrl: server.url, otlpUrl, args });
    started.push(claude);
    await claude.acceptApiKey();
    return claude;
  };
  try {
    const first = await start(options.args);
    await options.drive(first, { home, projectDir, restart: start, requests: server.requests });
    const exitStatuses = await Promise.all(started.map((c) => c.exitStatus()));
    await sleep(TELEMETRY_SETTLE_MS);
    return {
      home,
      projectDir,
      hookDir,
      hooks: readHookPayloads(hookDir),
      requests: server.requests,
      telemetry: receiver?.exports ?? [],
      unusedSteps: server.remainingSteps(),
      exitStatuses,
    };
  } finally {
    for (const claude of started) await claude.kill();
    await server.close();
    await receiver?.close();
  }
}
