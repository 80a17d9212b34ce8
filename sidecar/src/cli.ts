#!/usr/bin/env node
// ccotel: the command line of the sidecar.
import { Command } from 'commander';
import { registerBackfillCommand } from './commands/backfill.js';
import { registerDoctorCommand } from './commands/doctor.js';
import { registerHookCommands } from './commands/hooks.js';
import { registerQueryCommand } from './commands/query.js';
import { registerReportCommand } from './commands/report.js';
import { registerRetentionCommand } from './commands/retention.js';
import { registerRunCommand } from './commands/run.js';
import { registerServiceCommands } from './commands/service.js';
import { registerShellCommands } from './commands/shell.js';
import { registerStatusCommand } from './commands/status.js';
import { SIDECAR_VERSION } from './resource.js';

const program = new Command()
  .name('ccotel')
  .description('OpenTelemetry for Claude Code: transcripts, hooks and shell logs as traces, metrics and logs')
  .version(SIDECAR_VERSION);

registerBackfillCommand(program);
registerReportCommand(program);
registerRunCommand(program);
registerStatusCommand(program);
registerQueryCommand(program);
registerRetentionCommand(program);
registerHookCommands(program);
registerShellCommands(program);
registerDoctorCommand(program);
registerServiceCommands(program);

program.parseAsync(process.argv).catch((error: Error) => {
  console.error(`ccotel: ${error.message}`);
  process.exitCode = 1;
});
