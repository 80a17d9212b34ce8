import { spawn, spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

/** The hook script in the repo (install-hooks copies this file). */
export const HOOK_SCRIPT = fileURLToPath(new URL('../../sidecar/hook/ccotel-hook.sh', import.meta.url));
export const SHELL_SCRIPT = fileURLToPath(new URL('../../sidecar/shell/ccotel-shell.bash', import.meta.url));

export interface RunResult {
  status: number | null;
  stdout: string;
  stderr: string;
}

/** Runs the hook the way Claude Code does: a fresh process, the payload on stdin. */
export function runHook(shell: string, spoolDir: string | undefined, input: string | Buffer, env: NodeJS.ProcessEnv = {}): RunResult {
  const args = spoolDir === undefined ? [HOOK_SCRIPT] : [HOOK_SCRIPT, spoolDir];
  const result = spawnSync(shell, args, { input, env: { PATH: process.env.PATH, ...env }, encoding: 'utf8', timeout: 10_000 });
  return { status: result.status, stdout: result.stdout, stderr: result.stderr };
}

/** Same, without waiting, for running many hooks at once. */
export function runHookAsync(shell: string, spoolDir: string, input: string): Promise<RunResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(shell, [HOOK_SCRIPT, spoolDir], { env: { PATH: process.env.PATH }, stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('error', reject);
    child.on('close', (status) => resolve({ status, stdout, stderr }));
    child.stdin.end(input);
  });
}

/** Whether this machine can mount a private tmpfs (user + mount namespaces), for disk-full tests. */
export function canMountPrivateTmpfs(): boolean {
  const probe = spawnSync('unshare', ['--user', '--map-root-user', '--mount', 'sh', '-c', 'mount -t tmpfs -o size=8k tmpfs /mnt'], {
    encoding: 'utf8',
  });
  return probe.status === 0;
}

/** Root ignores directory permissions; to test a read-only spool as root, run the hook as nobody. */
export function unprivilegedPrefix(): string[] {
  return process.getuid?.() === 0 ? ['setpriv', '--reuid=65534', '--regid=65534', '--clear-groups', '--'] : [];
}

export interface BashToolRun {
  status: number | null;
  stdout: Buffer;
  stderr: Buffer;
}

export interface BashToolOptions {
  /** Line pasted before the command, as Claude Code pastes CLAUDE_ENV_FILE contents (none = integration off). */
  envFileLine?: string;
  /** A file sourced first, standing in for Claude Code's shell snapshot. */
  snapshot?: string;
  env?: NodeJS.ProcessEnv;
  cwdFile: string;
}

/**
 * Quotes like Claude Code's Bash tool does (as Python's shlex.quote): a word of only letters, digits and @%+=:,./-
 * as it is (`eval pwd`, seen with the real CLI); anything else in single quotes, with ' written as '"'"'.
 */
function claudeQuote(command: string): string {
  return /^[\w@%+=:,./-]+$/.test(command) ? command : `'${command.replaceAll("'", `'"'"'`)}'`;
}

/** The bash -c string Claude Code 2.1.332's Bash tool runs (seen with the real CLI, see docs/HOOKS.md). */
export function bashToolScript(command: string, options: BashToolOptions): string {
  return (
    `source ${claudeQuote(options.snapshot ?? '/dev/null')} 2>/dev/null || true && ${options.envFileLine ?? 'true'}\n` +
    `: && \\builtin shopt -u extglob 2>/dev/null || true && ` +
    `{ \\builtin unalias -- 'which'; \\builtin unset -f -- 'which'; } >/dev/null 2>&1 || true && ` +
    `eval ${claudeQuote(command)} < /dev/null && pwd -P >| ${claudeQuote(options.cwdFile)}`
  );
}

/** Runs a command the way the Bash tool does, in a fresh bash. */
export function runLikeBashTool(command: string, options: BashToolOptions): BashToolRun {
  const result = spawnSync('bash', ['-c', bashToolScript(command, options)], {
    env: { PATH: process.env.PATH, ...options.env },
    timeout: 20_000,
  });
  return { status: result.status, stdout: result.stdout, stderr: result.stderr };
}
