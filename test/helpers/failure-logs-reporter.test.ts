import { afterEach, expect, it, vi } from 'vitest';
import FailureLogsReporter, { LINES_PER_FILE } from './failure-logs-reporter.js';

afterEach(() => {
  vi.restoreAllMocks();
});

type Files = Parameters<FailureLogsReporter['onFinished']>[0];
const file = (id: string, state: 'pass' | 'fail') => ({ id, filepath: `/repo/${id}.test.ts`, result: { state } });
const log = (taskId: string, content: string, type: 'stdout' | 'stderr' = 'stdout') => ({ taskId, content, type, time: 0, size: content.length });

it('prints the last console lines of each failed file after the summary, and nothing of a file that passed', () => {
  const printed: string[] = [];
  vi.spyOn(process.stdout, 'write').mockImplementation((text) => printed.push(String(text)) > 0);
  const reporter = new FailureLogsReporter();
  for (let n = 0; n < LINES_PER_FILE + 5; n++) reporter.onUserConsoleLog(log('hung_0', `step ${n}`));
  reporter.onUserConsoleLog(log('hung', 'from its beforeAll\nsecond line', 'stderr'));
  reporter.onUserConsoleLog(log('fine_1', 'a passing file says this'));
  reporter.onFinished([file('hung', 'fail'), file('fine', 'pass')] as unknown as Files);

  const text = printed.join('');
  expect(text).toContain('the last console lines of /repo/hung.test.ts, which failed:');
  expect(text).toContain('stderr: from its beforeAll\nsecond line');
  expect(text).not.toContain('step 6\n'); // only the last LINES_PER_FILE lines are kept
  expect(text).toContain(`stdout: step ${LINES_PER_FILE + 4}`);
  expect(text).not.toContain('a passing file');
});
