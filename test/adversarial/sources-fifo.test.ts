// Issue 13 row 9: a FIFO named like a spool file froze the whole sidecar (a synchronous read blocks the
// event loop until a writer comes). Input files are now opened non-blocking and read only when they are
// regular files: FIFOs named like a spool file, a transcript, a subagent's meta file, a shell log and the
// hook-dropped file are skipped, and everything else goes on.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { assertBuilt, transcriptStatus } from '../reliability/cli.js';
import { appendTurns, waitFor } from '../reliability/transcripts.js';
import { hostileHome, OTLP_ONLY, runCaughtUp, runMeasured, terminate, writeSession, type HostileHome } from './sources-helpers.js';

function mkfifo(path: string): void {
  mkdirSync(dirname(path), { recursive: true });
  execFileSync('mkfifo', [path]);
}

/** A spool file name as the hook writes it: fired-at ns (20 digits), pid, random hex. */
function spoolName(hex: string): string {
  return `${(BigInt(Date.now()) * 1_000_000n).toString().padStart(20, '0')}-4242-${hex}.json`;
}

describe('FIFOs named like input files (slow: the real CLI)', () => {
  let h: HostileHome;
  afterEach(() => h.cleanup());

  it('neither run nor backfill blocks; the regular files around them are read', async () => {
    assertBuilt();
    h = await hostileHome('fifo');
    const transcript = writeSession(h, 'fifo-a', 2);
    const project = dirname(transcript);
    const state = join(h.home, 'state');
    mkfifo(join(project, 'fifo.jsonl'));
    // A real subagent transcript whose meta file is a FIFO (its agent type is read synchronously).
    appendTurns(join(project, 'fifo-a', 'subagents', 'agent-f1.jsonl'), 'fifo-a', 5, 6, Date.now() - 3_600_000);
    mkfifo(join(project, 'fifo-a', 'subagents', 'agent-f1.meta.json'));
    mkfifo(join(state, 'spool', spoolName('aa')));
    mkfifo(join(state, 'shell', 'fifo-a.jsonl'));
    mkfifo(join(state, 'hook-dropped'));

    const backfill = await runMeasured(['backfill', '--json', '--no-progress', '--keep-spool', ...OTLP_ONLY(h)], h.env, 60_000);
    expect(backfill.code, backfill.stderr).toBe(0);
    expect(JSON.parse(backfill.stdout)).toMatchObject({ files: 2 });

    // Idle after 2 s: a hook event that matches no span is delivered (and its spool file deleted) then.
    const sidecar = await runCaughtUp(h, 2, ['--idle', '2000']);
    // The spool is still consumed: a regular event file dropped now is delivered and deleted.
    const event = join(state, 'spool', spoolName('bb'));
    writeFileSync(event, JSON.stringify({ session_id: 'fifo-a', hook_event_name: 'Notification', message: 'hello' }));
    await waitFor('the spool event to be consumed', () => !existsSync(event), 30_000);
    writeSession(h, 'fifo-a', 1);
    await waitFor('the appended turn', async () => (await transcriptStatus(h.env, 'none'))?.bytesBehind === 0, 60_000);
    expect(await terminate(sidecar)).toBe(0);
    expect(sidecar.output()).toContain('not a regular file');
  }, 300_000);
});
