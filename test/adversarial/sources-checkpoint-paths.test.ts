// Hardening II row 11 (its checkpoint half): the checkpoint and status files kept raw transcript paths, and a
// project directory is named after a working directory, which can hold a secret. Checkpoints now name a file by a
// keyed hash of its path; the status masks the paths (and errors) of unreadable files as telemetry is masked.
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { assertBuilt, runCli } from '../reliability/cli.js';
import { waitFor } from '../reliability/transcripts.js';
import { hostileHome, runCaughtUp, terminate, writeSession, type HostileHome } from './sources-helpers.js';

const SECRET = 'AKIAQYLPMN5HHHFPZAM2';

/** Every file under `dir`, as text. */
function allText(dir: string): string {
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile())
    .map((entry) => readFileSync(join(entry.parentPath, entry.name), 'utf8'))
    .join('\n');
}

describe('row 11: secret-bearing transcript paths (slow: the real CLI)', () => {
  let h: HostileHome;
  afterEach(() => h.cleanup());

  it('no state file holds the path; status still counts the file and names the unreadable one masked', async () => {
    assertBuilt();
    h = await hostileHome('secret-path');
    const project = `-home-dev-deploy-${SECRET}-infra`;
    const transcript = writeSession(h, 'secret-path-a', 2, project);
    // A FIFO named like a transcript in the same directory: reported unreadable (at its first event).
    const sidecar = await runCaughtUp(h, 1);
    execFileSync('mkfifo', [join(dirname(transcript), 'blocked.jsonl')]);
    const status = async () => {
      const result = await runCli(['status', '--json', '--store', 'none'], h.env);
      return result.status === 0 ? (JSON.parse(result.stdout).sources[0] as { unreadableFiles: Record<string, string>; filesFollowed: number }) : undefined;
    };
    await waitFor('the FIFO reported unreadable', async () => Object.keys((await status())?.unreadableFiles ?? {}).length === 1, 30_000);
    writeSession(h, 'secret-path-a', 1, project);
    await waitFor('the appended turn committed', async () => {
      const result = await runCli(['status', '--json', '--store', 'none'], h.env);
      return result.status === 0 && JSON.parse(result.stdout).sources[0].bytesBehind === 0;
    }, 30_000);
    expect(await terminate(sidecar)).toBe(0);

    const state = allText(join(h.home, 'state', 'checkpoints'));
    expect(state).toContain('"version":2');
    expect(state).not.toContain(SECRET);
    const shown = await status();
    expect(shown?.filesFollowed).toBe(1);
    expect(Object.keys(shown!.unreadableFiles)).toEqual([expect.stringContaining('blocked.jsonl')]);
    expect(JSON.stringify(shown)).not.toContain(SECRET);
  }, 180_000);
});
