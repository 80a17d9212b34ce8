import type { Command } from 'commander';
import { loadConfig } from '../config.js';
import { installTelemetry, receiverUrl, uninstallTelemetry, type TelemetryProtocol } from '../install/telemetry.js';
import { installCodexTelemetry, uninstallCodexTelemetry } from '../sources/codex/install-telemetry.js';
import { checkAgent, printReport, runInstallStep, withAgentOptions } from './hooks.js';
import { processIo, type CommandIo } from './io.js';

interface TelemetryCommandOptions {
  project?: string;
  agent?: string;
  codexHome?: string;
  dryRun?: boolean;
  traces?: boolean;
  protocol?: TelemetryProtocol;
  logPrompts?: boolean;
  logToolDetails?: boolean;
  replace?: boolean;
}

const PROTOCOLS: TelemetryProtocol[] = ['http/protobuf', 'http/json'];

function protocolOption(value: string): TelemetryProtocol {
  if (!PROTOCOLS.includes(value as TelemetryProtocol)) throw new Error(`--protocol: ${value} is not ${PROTOCOLS.join(' or ')}`);
  return value as TelemetryProtocol;
}

export function registerTelemetryCommands(program: Command, io: CommandIo = processIo): void {
  const settingsOptions = (command: Command) =>
    withAgentOptions(command)
      .option('--project <dir>', "edit <dir>/.claude/settings.json instead of the user's ~/.claude/settings.json")
      .option('--dry-run', 'print the change as a diff and write nothing');
  settingsOptions(
    program
      .command('install-telemetry')
      .description("turn on Claude Code's own telemetry (settings.json env) and send it to ccotel run's receiver"),
  )
    .option('--traces', "also Claude Code's beta traces (CLAUDE_CODE_ENHANCED_TELEMETRY_BETA)")
    .option('--protocol <protocol>', 'http/protobuf (default) or http/json', protocolOption)
    .option('--log-prompts', 'also export prompt text (OTEL_LOG_USER_PROMPTS; masked by ccotel)')
    .option('--log-tool-details', 'also export tool inputs such as commands and paths (OTEL_LOG_TOOL_DETAILS; masked by ccotel)')
    .option('--replace', 'point settings that send the telemetry elsewhere at ccotel (uninstall-telemetry gives them back)')
    .addHelpText(
      'after',
      `
Sets CLAUDE_CODE_ENABLE_TELEMETRY=1, OTEL_METRICS_EXPORTER / OTEL_LOGS_EXPORTER=otlp, the protocol and
OTEL_EXPORTER_OTLP_ENDPOINT=http://127.0.0.1:<native_telemetry_port> in the "env" block; prompts and tool
details stay off unless asked. Every other key is kept; the previous file is saved as
settings.json.ccotel-backup-<time>. What was written is remembered in $STATE/telemetry-settings.json:
ccotel uninstall-telemetry takes back exactly that.

With --agent codex: one marked block at the end of $CODEX_HOME/config.toml sets [otel]'s log exporter
(otlp-http, protobuf) to http://127.0.0.1:<native_telemetry_port>/v1/logs; --log-prompts sets
log_user_prompt (docs/CODEX.md).`,
    )
    .action(function (this: Command, options: TelemetryCommandOptions) {
      runInstallStep(this, () => {
        const port = loadConfig({}, io.env).nativeTelemetryPort;
        if (port === 0) this.error('error: native_telemetry_port is 0 (no receiver): set a port first', { exitCode: 2 });
        if (checkAgent(this, options)) {
          const claudeOnly = (['traces', 'protocol', 'logToolDetails', 'replace'] as const).filter((option) => options[option] !== undefined);
          if (claudeOnly.length > 0) this.error(`error: ${claudeOnly.join(', ')}: Claude Code's options, not Codex's`, { exitCode: 2 });
          const report = installCodexTelemetry({ env: io.env, codexHome: options.codexHome, dryRun: options.dryRun, port, logPrompts: options.logPrompts });
          printReport(io, report, options.dryRun, `Codex's own events go to ${receiverUrl(port)} (ccotel run receives them)`);
          return;
        }
        const report = installTelemetry({ env: io.env, projectDir: options.project, dryRun: options.dryRun, port, ...options });
        printReport(io, report, options.dryRun, `Claude Code's telemetry goes to ${receiverUrl(port)} (ccotel run receives it)`);
      });
    });

  settingsOptions(program.command('uninstall-telemetry').description('take back what install-telemetry wrote to settings.json, and nothing else')).action(
    function (this: Command, options: TelemetryCommandOptions) {
      runInstallStep(this, () => {
        if (checkAgent(this, options)) {
          printReport(io, uninstallCodexTelemetry({ env: io.env, codexHome: options.codexHome, dryRun: options.dryRun }), options.dryRun, 'the [otel] block install-telemetry wrote is taken out');
          return;
        }
        printReport(io, uninstallTelemetry({ env: io.env, projectDir: options.project, dryRun: options.dryRun }), options.dryRun, 'the telemetry settings install-telemetry wrote are taken back');
      });
    },
  );
}
