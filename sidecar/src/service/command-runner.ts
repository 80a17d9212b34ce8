// systemctl and loginctl go through this one function, so tests (and hosts without systemd) can see
// exactly which commands install-service runs without running them.
import { spawnSync } from 'node:child_process';

export interface CommandResult {
  /** Exit status; null when the command could not be started or was killed. */
  status: number | null;
  stdout: string;
  stderr: string;
}

export type CommandRunner = (command: string, args: string[]) => CommandResult;

/** Runs the command for real, bounded in time so a hung D-Bus never hangs the installer. */
export const spawnRunner: CommandRunner = (command, args) => {
  const result = spawnSync(command, args, { encoding: 'utf8', timeout: 30_000 });
  const startError = result.error ? `${command}: ${result.error.message}` : '';
  return { status: result.status, stdout: result.stdout ?? '', stderr: (result.stderr ?? '') + startError };
};

export function succeeded(result: CommandResult): boolean {
  return result.status === 0;
}

/** The first line of what the command said, for one-line reports. */
export function firstLine(result: CommandResult): string {
  return (result.stderr.trim() || result.stdout.trim()).split('\n')[0] ?? '';
}
