import { spawn } from 'node:child_process';
import { accessSync, constants, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { CLAUDE_CODE_HOOK_EVENTS } from '../../sidecar/src/install/hook-events.js';

// Runs the real Claude Code CLI (`claude -p`) offline: a temp HOME, a temp project, the scripted
// model server as ANTHROPIC_BASE_URL, native telemetry to a loopback OTLP receiver, and hook
// commands installed into that HOME's ~/.claude/settings.json.

const REPO_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');

/** The platform binary of the pinned devDependency; the npm wrapper needs Node 22, the binary does not. */
export const CLAUDE_BINARY = join(REPO_ROOT, 'node_modules/@anthropic-ai/claude-code-linux-x64/claude');

/** Why the real CLI cannot run here, or undefined when it can. */
export function claudeBinaryProblem(): string | undefined {
  if (process.platform !== 'linux' || process.arch !== 'x64') {
    return `the harness runs the linux-x64 Claude Code binary; this is ${process.platform}-${process.arch}`;
  }
  try {
    accessSync(CLAUDE_BINARY, constants.X_OK);
    return undefined;
  } catch {
    return `Claude Code binary missing or not executable at ${CLAUDE_BINARY} (npm install the devDependency @anthropic-ai/claude-code-linux-x64)`;
  }
}


export function shellQuote(s: string): string {
  return `'${s.replace(/'/g, `'\\''`)}'`;
}

/**
 * A hook command that copies its stdin payload into `dir`, one file per event, named by start time
 * (nanoseconds) so the files sort in firing order.
 */
export function copyStdinHookCommand(dir: string): string {
  return `cat > ${shellQuote(dir)}/"$(date +%s%N)-$$.json"`;
}

/** Writes ~/.claude/settings.json in `home` with `command` on every hook event. */
export function installHooks(home: string, command: string, events: readonly string[] = CLAUDE_CODE_HOOK_EVENTS): void {
  const hooks = Object.fromEntries(
    events.map((event) => [event, [{ matcher: '*', hooks: [{ type: 'command', command, timeout: 30 }] }]]),
  );
  mkdirSync(join(home, '.claude'), { recursive: true });
  writeFileSync(join(home, '.claude', 'settings.json'), JSON.stringify({ hooks }, null, 2) + '\n');
}

export interface HookPayload {
  file: string;
  payload: Record<string, unknown>;
}

/** The payloads a copyStdinHookCommand wrote, in firing order. */
export function readHookPayloads(dir: string): HookPayload[] {
  return readdirSync(dir)
    .filter((f) => f.endsWith('.json'))
    .sort((a, b) => {
      const [ta, tb] = [a, b].map((f) => BigInt(f.split('-')[0]));
      return ta === tb ? a.localeCompare(b) : ta < tb ? -1 : 1;
    })
    .map((file) => ({ file, payload: JSON.parse(readFileSync(join(dir, file), 'utf8')) as Record<string, unknown> }));
}

export interface ClaudeRunOptions {
  home: string;
  projectDir: string;
  prompt: string;
  modelUrl: string;
  /** OTLP/HTTP JSON endpoint (base URL) for native telemetry; telemetry is off without it. */
  otlpUrl?: string;
  /** Resume this session id (`--resume`). */
  resume?: string;
  /** `--allowedTools`; tools not listed (and not allowed by default) are denied in print mode. */
  allowedTools?: string[];
  env?: Record<string, string>;
  timeoutMs?: number;
}

/** The `--output-format json` result (only the fields the harness relies on are typed). */
export interface ClaudeJsonResult {
  type: 'result';
  subtype: string;
  is_error: boolean;
  session_id: string;
  num_turns: number;
  result?: string;
  usage: Record<string, unknown>;
  permission_denials: { tool_name: string; tool_use_id: string; tool_input: Record<string, unknown> }[];
  [field: string]: unknown;
}

export interface ClaudeRunResult {
  exitCode: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
  /** The parsed JSON result; undefined when stdout was not one (see stdout/stderr). */
  json?: ClaudeJsonResult;
  durationMs: number;
}

export function telemetryEnv(otlpUrl: string): Record<string, string> {
  return {
    CLAUDE_CODE_ENABLE_TELEMETRY: '1',
    CLAUDE_CODE_ENHANCED_TELEMETRY_BETA: '1',
    OTEL_TRACES_EXPORTER: 'otlp',
    OTEL_METRICS_EXPORTER: 'otlp',
    OTEL_LOGS_EXPORTER: 'otlp',
    OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
    OTEL_EXPORTER_OTLP_ENDPOINT: otlpUrl,
    // Richer tool attributes (commands, file paths) on native spans and events.
    OTEL_LOG_TOOL_DETAILS: '1',
    // With a custom ANTHROPIC_BASE_URL, Bash subprocesses only get TRACEPARENT (the tool.execution
    // span) when this is set; without it TRACEPARENT is empty there.
    CLAUDE_CODE_PROPAGATE_TRACEPARENT: '1',
    OTEL_METRIC_EXPORT_INTERVAL: '1000',
    OTEL_LOGS_EXPORT_INTERVAL: '500',
    OTEL_TRACES_EXPORT_INTERVAL: '500',
  };
}

/** A clean environment for the CLI: nothing from the caller's HOME, shell or OTEL_* settings leaks in. */
export function claudeEnv(options: Pick<ClaudeRunOptions, 'home' | 'modelUrl' | 'otlpUrl' | 'env'>): Record<string, string> {
  return {
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    HOME: options.home,
    SHELL: '/bin/bash',
    LANG: 'C.UTF-8',
    ANTHROPIC_BASE_URL: options.modelUrl,
    ANTHROPIC_API_KEY: 'sk-ant-harness-dummy-key',
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
    DISABLE_AUTOUPDATER: '1',
    ...(options.otlpUrl ? telemetryEnv(options.otlpUrl) : {}),
    ...options.env,
  };
}

export function runClaude(options: ClaudeRunOptions): Promise<ClaudeRunResult> {
  const problem = claudeBinaryProblem();
  if (problem) return Promise.reject(new Error(problem));

  const args = ['-p', options.prompt, '--output-format', 'json'];
  if (options.resume) args.push('--resume', options.resume);
  if (options.allowedTools?.length) args.push('--allowedTools', options.allowedTools.join(','));

  const env = claudeEnv(options);
  const started = Date.now();
  const child = spawn(CLAUDE_BINARY, args, { cwd: options.projectDir, env, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
  const timer = setTimeout(() => child.kill('SIGKILL'), options.timeoutMs ?? 120_000);

  return new Promise((resolvePromise, reject) => {
    child.on('error', (err) => {
      clearTimeout(timer);
      reject(err);
    });
    child.on('close', (exitCode, signal) => {
      clearTimeout(timer);
      let json: ClaudeJsonResult | undefined;
      try {
        json = JSON.parse(stdout) as ClaudeJsonResult;
      } catch {
        json = undefined;
      }
      resolvePromise({ exitCode, signal, stdout, stderr, json, durationMs: Date.now() - started });
    });
  });
}
