import type { Command } from 'commander';
import { SPOOLED_EVENTS, BEHAVIOUR_REPLACING_EVENTS } from '../install/hook-events.js';
import { installHooks, uninstallHooks } from '../install/hooks.js';
import type { InstallReport } from '../install/options.js';
import { SettingsError } from '../install/settings-file.js';
import { statePaths } from '../paths.js';
import { processIo, type CommandIo } from './io.js';

interface HookCommandOptions {
  project?: string;
  dryRun?: boolean;
}

/** Prints what an install/uninstall did (or, with --dry-run, would do). */
export function printReport(io: CommandIo, report: InstallReport, dryRun: boolean | undefined, done: string): void {
  const { change } = report;
  if (!change.changed) io.out(`${change.path}: already as wanted, nothing changed\n`);
  else if (dryRun) io.out(change.diff);
  else {
    io.out(`${change.path}: ${done}\n`);
    if (report.backupPath) io.out(`backup of the previous file: ${report.backupPath}\n`);
  }
  for (const warning of report.warnings) io.out(`warning: ${warning}\n`);
}

/** Runs an install step, turning a bad settings file into a clear error instead of a stack trace. */
export function runInstallStep(command: Command, step: () => void): void {
  try {
    step();
  } catch (err) {
    if (err instanceof SettingsError) command.error(`error: ${err.message}`, { exitCode: 2 });
    throw err;
  }
}

export function registerHookCommands(program: Command, io: CommandIo = processIo): void {
  program
    .command('install-hooks')
    .description('register the ccotel spool hook for every Claude Code hook event in settings.json')
    .option('--project <dir>', "edit <dir>/.claude/settings.json instead of the user's ~/.claude/settings.json")
    .option('--dry-run', 'print the change as a diff and write nothing')
    .addHelpText(
      'after',
      `
Adds one command hook per event (${SPOOLED_EVENTS.length} events of Claude Code 2.1.332; not
${BEHAVIOUR_REPLACING_EVENTS.join('/')}, whose hooks replace Claude Code's own worktree handling).
The hook is a small POSIX sh script copied to $STATE/bin/ccotel-hook.sh; it writes each event's
JSON to $STATE/spool, always exits 0 and prints nothing, so it never affects the agent.
$STATE is $CCOTEL_STATE_DIR, else \${XDG_STATE_HOME:-~/.local/state}/ccotel.

Every other hook and setting is kept; the previous file is saved as
settings.json.ccotel-backup-<time>. Running it again changes nothing.
Undo with: ccotel uninstall-hooks [--project <dir>]
The same hook also comes as a Claude Code plugin (claude plugin install ccotel@ccotel,
docs/HOOKS.md); with both, each event is still spooled once.`,
    )
    .action(function (this: Command, options: HookCommandOptions) {
      runInstallStep(this, () => {
        const report = installHooks({ env: io.env, projectDir: options.project, dryRun: options.dryRun });
        printReport(io, report, options.dryRun, `ccotel hook registered for ${SPOOLED_EVENTS.length} events`);
        if (!options.dryRun) io.out(`events are spooled to ${statePaths(io.env).spoolDir}\n`);
      });
    });

  program
    .command('uninstall-hooks')
    .description('remove the hooks install-hooks added to settings.json, and nothing else')
    .option('--project <dir>', "edit <dir>/.claude/settings.json instead of the user's ~/.claude/settings.json")
    .option('--dry-run', 'print the change as a diff and write nothing')
    .addHelpText(
      'after',
      `
Removes every handler that runs ccotel-hook.sh, and the matcher groups, event lists and "hooks"
object left empty by that; everything else stays as it is. The previous file is saved as
settings.json.ccotel-backup-<time>. Events already in the spool are kept for the sidecar.`,
    )
    .action(function (this: Command, options: HookCommandOptions) {
      runInstallStep(this, () => {
        printReport(io, uninstallHooks({ env: io.env, projectDir: options.project, dryRun: options.dryRun }), options.dryRun, 'ccotel hooks removed');
      });
    });
}
