// A reporter for CI, whose log is read from its end: after the summary, the last console lines of each test file that
// failed, so a failure that says only "Hook timed out" also shows how far the file had got.
import type { Reporter } from 'vitest/node';

type ConsoleLog = Parameters<NonNullable<Reporter['onUserConsoleLog']>>[0];
type TestFiles = Parameters<NonNullable<Reporter['onFinished']>>[0];

/** Lines kept per test file: the last ones are what a failure needs. */
export const LINES_PER_FILE = 40;

export default class FailureLogsReporter implements Reporter {
  /** The last lines each test file printed, by the file's task id (a test's or hook's id starts with it). */
  private readonly lines = new Map<string, string[]>();

  onUserConsoleLog(log: ConsoleLog): void {
    const file = log.taskId?.split('_')[0];
    if (!file) return;
    const kept = this.lines.get(file) ?? [];
    kept.push(...`${log.type}: ${log.content}`.trimEnd().split('\n'));
    this.lines.set(file, kept.slice(-LINES_PER_FILE));
  }

  /** Where the default reporter prints its summary (onTestRunEnd comes before it). */
  onFinished(files: TestFiles = []): void {
    for (const file of files) {
      const kept = this.lines.get(file.id);
      if (file.result?.state !== 'fail' || !kept) continue;
      process.stdout.write(`\nthe last console lines of ${file.filepath}, which failed:\n${kept.join('\n')}\n`);
    }
  }
}
