// "Nothing kills the process": errors no code path caught used to end `ccotel run` (Node's default for an
// unhandled rejection or an uncaught exception). The last-resort handlers of `run` log them; an I/O error
// (it carries a syscall) and a rejection leave the sidecar running, anything else stops it cleanly, exit 1.
import { spawnSync } from 'node:child_process';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { assertBuilt } from '../reliability/cli.js';

const RUN_MODULE = resolve('dist/sidecar/src/commands/run.js');

describe('last-resort error handlers of run', () => {
  it('log a rejection and an uncaught I/O error and keep running; stop with exit 1 on any other uncaught error', () => {
    assertBuilt();
    const script = `
      const { keepRunningOnStrayErrors } = await import(${JSON.stringify(RUN_MODULE)});
      keepRunningOnStrayErrors((message) => console.error(message), () => { console.error('clean stop'); process.exit(); });
      void Promise.reject(new Error('a rejection nobody awaited'));
      setTimeout(() => { throw Object.assign(new Error('EMFILE: too many open files, open'), { code: 'EMFILE', syscall: 'open' }); }, 20);
      setTimeout(() => console.error('still running'), 60);
      setTimeout(() => { throw new TypeError('a bug'); }, 100);
      setTimeout(() => console.error('not reached'), 5000);
    `;
    const result = spawnSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8', timeout: 30_000 });
    expect(result.stderr).toContain('unhandled rejection, kept running: Error: a rejection nobody awaited');
    expect(result.stderr).toContain('uncaught I/O error, kept running: EMFILE');
    expect(result.stderr).toContain('still running');
    expect(result.stderr).toContain('uncaught error, stopping: TypeError: a bug');
    expect(result.stderr).toContain('clean stop');
    expect(result.stderr).not.toContain('not reached');
    expect(result.status).toBe(1);
  });
});
