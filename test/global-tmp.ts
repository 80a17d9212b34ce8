// Every temporary file of a test run in one directory of its own, removed at the end: the workers' and every
// process they start's `os.tmpdir()` (TMPDIR) is that directory. A full run used to leave 66 `ccotel-*`
// directories (333 MB) in /tmp. What a run still leaves in the system's temporary directory fails it, named.
import { chmodSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export default function setup(): () => void {
  const systemTmp = tmpdir();
  const before = new Set(readdirSync(systemTmp));
  const runDir = mkdtempSync(join(systemTmp, 'ccotel-test-run-'));
  // Others may pass through it, as through the system's (a test runs the hook as another user in a dir of its own).
  chmodSync(runDir, 0o711);
  process.env.TMPDIR = runDir;
  // For a test whose output names its input's path: the same path in every run (it removes what it made).
  process.env.CCOTEL_TEST_FIXED_TMPDIR = systemTmp;
  return () => {
    rmSync(runDir, { recursive: true, force: true, maxRetries: 3 });
    // Another run's directory (two runs at once) is not this one's leftover.
    const left = readdirSync(systemTmp).filter((name) => name.startsWith('ccotel') && !name.startsWith('ccotel-test-run-') && !before.has(name));
    if (left.length > 0) throw new Error(`the tests left ${left.length} entries in ${systemTmp}: ${left.join(', ')}`);
  };
}
