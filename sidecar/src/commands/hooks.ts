import type { Command } from 'commander';
import { SPOOLED_EVENTS, BEHAVIOUR_REPLACING_EVENTS } from '../install/hook-events.js';
import { installHooks, uninstallHooks } from '../install/hooks.js';
import type { InstallReport } from '../install/options.js';
import { SettingsError } from '../install/settings-file.js';
import { statePaths } from '../paths.js';
import { CODEX_HOOK_EVENTS, installCodexHooks, uninstallCodexHooks } from '../sources/codex/install-hooks.js';
import { processIo, type CommandIo } from './io.js';

export interface HookCommandOptions {
  project?: string;
  dryRun?: boolean;
  agent?: string;
  codexHome?: string;
}

const AGENTS = ['claude-code', 'codex'];

/** The agent option of the install commands: Claude Code's settings.json, or Codex's home. */
export function withAgentOptions(command: Command): Command {
  return command
    .option('--agent <name>', `the agent to set up: ${AGENTS.join(' or ')}`, 'claude-code')
    .option('--codex-home <dir>', "with --agent codex: Codex's home (default: $CODEX_HOME, codex_home in the config file, ~/.codex)");
}

/** Whether the command is for Codex; an error for an unknown agent or an option of the other agent's. */
export function checkAgent(command: Command, options: HookCommandOptions): boolean {
  if (!AGENTS.includes(options.agent ?? 'claude-code')) command.error(`error: --agent must be ${AGENTS.join(' or ')}, not ${options.agent}`, { exitCode: 2 });
  if (options.codexHome !== undefined && options.agent !== 'codex') command.error('error: --codex-home goes with --agent codex', { exitCode: 2 });
  if (options.project !== undefined && options.agent === 'codex') command.error("error: --project is Claude Code's (.claude/settings.json); Codex's hooks are in its home (--codex-home)", { exitCode: 2 });
  return options.agent === 'codex';
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
  withAgentOptions(program
    .command('install-hooks')
    .description('register the ccotel spool hook for every Claude Code hook event in settings.json (or Codex\'s, --agent codex)'))
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
docs/HOOKS.md); with both, each event is still spooled once.

With --agent codex: the same hook in $CODEX_HOME/hooks.json for the ${CODEX_HOOK_EVENTS.length} events Codex fires
hooks for, and its trust in $CODEX_HOME/config.toml (one marked block of [hooks.state] entries,
without which Codex skips a hook it has not reviewed). docs/CODEX.md says more.`,
    )
    .action(function (this: Command, options: HookCommandOptions) {
      runInstallStep(this, () => {
        if (checkAgent(this, options)) {
          const reports = installCodexHooks({ env: io.env, codexHome: options.codexHome, dryRun: options.dryRun });
          for (const report of reports) printReport(io, report, options.dryRun, 'ccotel hook registered and trusted');
          if (!options.dryRun) io.out(`events are spooled to ${statePaths(io.env).spoolDir}\n`);
          return;
        }
        const report = installHooks({ env: io.env, projectDir: options.project, dryRun: options.dryRun });
        printReport(io, report, options.dryRun, `ccotel hook registered for ${SPOOLED_EVENTS.length} events`);
        if (!options.dryRun) io.out(`events are spooled to ${statePaths(io.env).spoolDir}\n`);
      });
    });

  withAgentOptions(program
    .command('uninstall-hooks')
    .description('remove the hooks install-hooks added to settings.json (or Codex\'s, --agent codex), and nothing else'))
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
        if (checkAgent(this, options)) {
          for (const report of uninstallCodexHooks({ env: io.env, codexHome: options.codexHome, dryRun: options.dryRun })) printReport(io, report, options.dryRun, 'ccotel hooks removed');
          return;
        }
        printReport(io, uninstallHooks({ env: io.env, projectDir: options.project, dryRun: options.dryRun }), options.dryRun, 'ccotel hooks removed');
      });
    });
}
