// `ccotel install-service` / `ccotel uninstall-service`: the sidecar (and the retention timer) as systemd
// user units. The work is in service/install-service.ts; this file parses flags and prints the report.
import type { Command } from 'commander';
import { existsSync, realpathSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { spawnRunner, type CommandRunner } from '../service/command-runner.js';
import { installService, uninstallService, type ServiceReport } from '../service/install-service.js';
import { processIo, type CommandIo } from './io.js';

export function printServiceReport(io: CommandIo, report: ServiceReport): void {
  for (const file of report.files) io.out(`${file.path}: ${file.action}\n`);
  for (const command of report.commands) io.out(`${command.ok ? 'ok  ' : 'FAIL'} ${command.command}${command.output ? ` (${command.output})` : ''}\n`);
  for (const note of report.notes) io.out(`note: ${note}\n`);
  if (report.manual.length > 0) io.out(`still to do, by you:\n${report.manual.map((command) => `  ${command}\n`).join('')}`);
}

/** This node and the built CLI beside this module (dist/sidecar/src/cli.js): what the unit will start. */
function currentProgram(): { node: string; cli: string } {
  const cli = fileURLToPath(new URL('../cli.js', import.meta.url));
  if (!existsSync(cli)) throw new Error(`${cli} does not exist: build first (npm run build) and run install-service from the built CLI`);
  return { node: process.execPath, cli: realpathSync(cli) };
}

export function registerServiceCommands(program: Command, io: CommandIo = processIo, run: CommandRunner = spawnRunner): void {
  program
    .command('install-service')
    .description('run the sidecar as a systemd user service (and retention daily), started at boot, kept after logout')
    .addHelpText(
      'after',
      `
Writes ccotel.service (and, for an embedded store, ccotel-retention.service + .timer) from
deploy/systemd/ to \${XDG_CONFIG_HOME:-~/.config}/systemd/user/ with the absolute paths of this node
and this ccotel, enables and (re)starts them, and turns on lingering (loginctl enable-linger) so
the sidecar runs without a login session. Running it again changes nothing. Extra environment
(OTEL_EXPORTER_OTLP_HEADERS, …) goes in \${XDG_CONFIG_HOME:-~/.config}/ccotel/ccotel.env.
Undo with: ccotel uninstall-service`,
    )
    .action(() => {
      const report = installService({ env: io.env, run, program: currentProgram() });
      printServiceReport(io, report);
      if (report.manual.length > 0) process.exitCode = 3;
    });

  program
    .command('uninstall-service')
    .description('stop and remove what install-service installed (units, and lingering if it turned that on)')
    .action(() => {
      const report = uninstallService({ env: io.env, run });
      printServiceReport(io, report);
      if (report.manual.length > 0) process.exitCode = 3;
    });
}
