import type { Command } from 'commander';
import { installShell, uninstallShell } from '../install/shell.js';
import { statePaths } from '../paths.js';
import { installCodexShell, uninstallCodexShell } from '../sources/codex/install-shell.js';
import { checkAgent, printReport, runInstallStep, withAgentOptions, type HookCommandOptions as ShellCommandOptions } from './hooks.js';
import { processIo, type CommandIo } from './io.js';

export function registerShellCommands(program: Command, io: CommandIo = processIo): void {
  withAgentOptions(program
    .command('install-shell')
    .description("log every command Claude Code's Bash tool (or Codex, --agent codex) runs (start, end, exit status) for the sidecar"))
    .option('--project <dir>', "edit <dir>/.claude/settings.json instead of the user's ~/.claude/settings.json")
    .option('--dry-run', 'print the change as a diff and write nothing')
    .addHelpText(
      'after',
      `
Adds a SessionStart hook to settings.json that writes one line to Claude Code's CLAUDE_ENV_FILE;
Claude Code then sources $STATE/bin/ccotel-shell.bash before every Bash tool command. Inside
shells with CLAUDE_CODE_SESSION_ID set it appends a "start" and an "end" JSON line per command to
$STATE/shell/<session id>.jsonl; it never changes the command's output, exit status, $?, $_,
PIPESTATUS, DEBUG/ERR traps or PROMPT_COMMAND. Your own terminals are not touched.
$STATE is $CCOTEL_STATE_DIR, else \${XDG_STATE_HOME:-~/.local/state}/ccotel.
Takes effect for sessions started (or resumed) afterwards. Undo with: ccotel uninstall-shell

With --agent codex: one marked block in $CODEX_HOME/config.toml sets BASH_ENV (and the log dir) in
[shell_environment_policy.set], so the bash of every command Codex runs sources the script, which
logs under CODEX_THREAD_ID (docs/CODEX.md).`,
    )
    .action(function (this: Command, options: ShellCommandOptions) {
      runInstallStep(this, () => {
        if (checkAgent(this, options)) {
          printReport(io, installCodexShell({ env: io.env, codexHome: options.codexHome, dryRun: options.dryRun }), options.dryRun, 'the commands Codex runs source the shell log script');
          return;
        }
        const report = installShell({ env: io.env, projectDir: options.project, dryRun: options.dryRun });
        printReport(io, report, options.dryRun, 'shell log hook registered (SessionStart)');
        if (!options.dryRun) io.out(`Bash tool commands are logged to ${statePaths(io.env).shellLogDir}\n`);
      });
    });

  withAgentOptions(program
    .command('uninstall-shell')
    .description('remove the SessionStart hook (or Codex config block) install-shell added, and nothing else'))
    .option('--project <dir>', "edit <dir>/.claude/settings.json instead of the user's ~/.claude/settings.json")
    .option('--dry-run', 'print the change as a diff and write nothing')
    .addHelpText(
      'after',
      `
Sessions started afterwards no longer log. $STATE/bin/ccotel-shell.bash is kept, because
sessions still running source it before each command; logs already written are kept.`,
    )
    .action(function (this: Command, options: ShellCommandOptions) {
      runInstallStep(this, () => {
        if (checkAgent(this, options)) {
          printReport(io, uninstallCodexShell({ env: io.env, codexHome: options.codexHome, dryRun: options.dryRun }), options.dryRun, 'shell log block removed');
          return;
        }
        printReport(io, uninstallShell({ env: io.env, projectDir: options.project, dryRun: options.dryRun }), options.dryRun, 'shell log hook removed');
      });
    });
}
