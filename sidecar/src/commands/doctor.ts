// `ccotel doctor`: checks this host's setup and says, for each problem, what to do about it.
import type { Command } from 'commander';
import { formatDoctorReport, runDoctor } from '../doctor/run-doctor.js';
import { processIo, type CommandIo } from './io.js';

interface DoctorFlags {
  store?: string;
  otlp?: string;
  collectorHealth?: string;
  timeout?: string;
  json?: boolean;
}

export function registerDoctorCommand(program: Command, io: CommandIo = processIo): void {
  program
    .command('doctor')
    .description('check transcripts, hooks, shell integration, store, collector, clock, disk and permissions; exit 1 on a problem')
    .option('--store <path|url>', 'the store to check (default: as `ccotel run` would use)')
    .option('--otlp <url>', 'the collector to check (default: as `ccotel run` would use)')
    .option('--collector-health <url>', "also ask the collector's health_check extension, e.g. http://collector:13133/")
    .option('--timeout <ms>', 'how long to wait for the store and the collector', '5000')
    .option('--json', 'print the checks as JSON')
    .addHelpText(
      'after',
      `
Each check prints ok, WARN (works, but something is missing or off) or FAIL (broken), a message,
and the fix. Exit status 1 when any check failed, 0 otherwise. The doctor only looks: it creates
no table, takes no lock and sends an empty export (no data) to the collector.`,
    )
    .action(async (flags: DoctorFlags) => {
      const timeoutMs = Number(flags.timeout);
      if (!(timeoutMs > 0)) throw new Error(`--timeout must be a number of milliseconds > 0, not "${flags.timeout}"`);
      const report = await runDoctor({ env: io.env, store: flags.store, otlp: flags.otlp, collectorHealthUrl: flags.collectorHealth, timeoutMs });
      io.out(flags.json ? `${JSON.stringify(report, null, 2)}\n` : formatDoctorReport(report));
      if (!report.healthy) process.exitCode = 1;
    });
}
