#!/usr/bin/env node
// ccotel: the command line of the sidecar.
import type { Command } from 'commander';
import { SIDECAR_VERSION } from './resource.js';

type Register = (program: Command) => void;

/**
 * Each command's module, loaded only when that command runs: `ccotel query` must not pay for the file
 * watcher, secret rules and OTLP exporters that `run` needs (startup time is most of a quick query).
 */
const COMMANDS: Record<string, () => Promise<Register>> = {
  backfill: async () => (await import('./commands/backfill.js')).registerBackfillCommand,
  report: async () => (await import('./commands/report.js')).registerReportCommand,
  run: async () => (await import('./commands/run.js')).registerRunCommand,
  status: async () => (await import('./commands/status.js')).registerStatusCommand,
  query: async () => (await import('./commands/query.js')).registerQueryCommand,
  ui: async () => (await import('./commands/ui.js')).registerUiCommand,
  retention: async () => (await import('./commands/retention.js')).registerRetentionCommand,
  'install-hooks': async () => (await import('./commands/hooks.js')).registerHookCommands,
  'uninstall-hooks': async () => (await import('./commands/hooks.js')).registerHookCommands,
  'install-shell': async () => (await import('./commands/shell.js')).registerShellCommands,
  'uninstall-shell': async () => (await import('./commands/shell.js')).registerShellCommands,
  'install-telemetry': async () => (await import('./commands/telemetry.js')).registerTelemetryCommands,
  'uninstall-telemetry': async () => (await import('./commands/telemetry.js')).registerTelemetryCommands,
  doctor: async () => (await import('./commands/doctor.js')).registerDoctorCommand,
  'install-service': async () => (await import('./commands/service.js')).registerServiceCommands,
  'uninstall-service': async () => (await import('./commands/service.js')).registerServiceCommands,
};

async function main(): Promise<void> {
  // The everyday question asked without commander (options.ts parseCommandArgs), when its arguments are plain.
  if (process.argv[2] === 'report' && (await (await import('./commands/report.js')).reportFromArgs(process.argv.slice(3)))) return;
  // Commander answers --version only once every command is registered, which loads them all (0.7 s instead of 0.15).
  if (process.argv.length === 3 && ['--version', '-V'].includes(process.argv[2])) return void console.log(SIDECAR_VERSION);
  const { Command } = await import('commander');
  const program = new Command()
    .name('ccotel')
    .description('OpenTelemetry for Claude Code: transcripts, hooks and shell logs as traces, metrics and logs')
    .version(SIDECAR_VERSION);
  const named = COMMANDS[process.argv[2] ?? ''];
  // A known command loads only its module; anything else (help, a typo) loads all, for the full --help.
  const registers = named ? [await named()] : [...new Set(await Promise.all(Object.values(COMMANDS).map((load) => load())))];
  for (const register of registers) register(program);
  await program.parseAsync(process.argv);
}

/** One line that says what went wrong and, where it can, what to do. */
function explainError(error: Error): string {
  // Messages of ours already say `ccotel:` (the query endpoint sends them through the client).
  const message = (error.message.split('\n', 1)[0] ?? '').replace(/^(?:ccotel: )+/, '').trim();
  if (/\bECONNREFUSED\b/.test(message)) return `${message}: nothing answers at that address; is the ClickHouse server, or the \`ccotel run\` serving this store, running? (--store or CCOTEL_STORE)`;
  return message || error.name;
}

// A reader that stops early (`ccotel report | head`) closes the pipe: what is left to print has nowhere to go, which
// is no failure of the command. Ended as a shell's tools end there, without a message or the stack of an unhandled
// error (written through the stream, the error comes as its event; written to the descriptor, it is thrown).
const brokenPipe = (error: Error) => (error as NodeJS.ErrnoException).code === 'EPIPE';
process.stdout.on('error', (error: Error) => {
  if (!brokenPipe(error)) throw error;
  process.exit(0);
});

main().catch((error: Error) => {
  if (brokenPipe(error)) return;
  console.error(`ccotel: ${explainError(error)}`);
  process.exitCode = 1;
});
