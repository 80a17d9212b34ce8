// A Codex test's scratch home. Apart from the recording scenario (harness/codex-scenario.ts), which
// `record-codex.ts` runs outside vitest, where importing vitest fails.
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { onTestFinished } from 'vitest';

/** A fresh home for one Codex test: its CODEX_HOME (not made yet) and an empty project directory, removed when the test ends. */
export function codexTestHome(prefix: string): { home: string; codexHome: string; project: string } {
  const home = mkdtempSync(join(tmpdir(), `${prefix}-`));
  onTestFinished(() => rmSync(home, { recursive: true, force: true }));
  const project = join(home, 'project');
  mkdirSync(project);
  return { home, codexHome: join(home, 'codex'), project };
}
