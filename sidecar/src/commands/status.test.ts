// `ccotel status` from the files a running sidecar leaves: the fallback status (state dir not writable) and a
// status that nobody could write for a while.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { CheckpointStore, type SidecarStatus } from '../sources/checkpoints.js';
import { writeFileAtomic } from '../sources/state-file.js';
import { status } from './status.js';

let home: string;
let saved: NodeJS.ProcessEnv;
beforeEach(() => {
  home = mkdtempSync(join(tmpdir(), 'ccotel-status-'));
  saved = { ...process.env };
  delete process.env.CCOTEL_CONFIG;
  Object.assign(process.env, { HOME: home, CCOTEL_STATE_DIR: join(home, 'state'), XDG_CONFIG_HOME: join(home, 'config') });
});
afterEach(() => {
  process.env = saved;
  rmSync(home, { recursive: true, force: true });
});

const running = (updatedMs: number): SidecarStatus => ({
  pid: process.pid, startedMs: 1, updatedMs, store: '', otlpEndpoint: 'http://127.0.0.1:1', roots: [], watcher: 'inotify',
  sink: { state: 'ok', retries: 0 }, filesFollowed: 3, unreadableFiles: {}, linesSkipped: {},
});

describe('status', () => {
  it('Hardening II row 9: reads the status a sidecar could only write to its runtime dir', async () => {
    const checkpoints = new CheckpointStore(join(home, 'state', 'checkpoints'), 'abc');
    // As saveStatus does when the state dir refuses the write: the same document, in the runtime dir only.
    writeFileAtomic(checkpoints.fallbackStatusPath, JSON.stringify({ ...running(Date.now()), stateErrors: { [checkpoints.statusPath]: 'EROFS: read-only file system' } }), false);
    try {
      const [source] = (await status({ store: 'none' })).sources;
      expect(source).toMatchObject({ running: true, filesFollowed: 3, stateErrors: { [checkpoints.statusPath]: expect.stringMatching(/EROFS/) } });
      expect(source.statusStaleSince).toBeUndefined();
    } finally {
      rmSync(checkpoints.fallbackStatusPath, { force: true });
    }
  });

  it('says when a running sidecar could write its status nowhere for a while', async () => {
    const checkpoints = new CheckpointStore(join(home, 'state', 'checkpoints'), 'abc');
    const updatedMs = Date.now() - 60_000;
    checkpoints.saveStatus(running(updatedMs));
    const [source] = (await status({ store: 'none' })).sources;
    expect(source.statusStaleSince).toBe(new Date(updatedMs).toISOString());
  });
});
