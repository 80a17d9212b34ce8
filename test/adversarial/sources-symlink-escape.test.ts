// Issue 13 row 8: `x.jsonl -> /etc/shadow` in a transcript dir or the shell log dir was read and stored
// (masked) as skipped-line bodies, and sent over OTLP. Now a link is never read through: a symlinked
// transcript whose target is itself a transcript inside a root is followed there, under its own name (once),
// and any other link is reported and skipped; shell logs are read only when they are regular files.
import { randomBytes } from 'node:crypto';
import { mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { assertBuilt, transcriptStatus } from '../reliability/cli.js';
import { waitFor } from '../reliability/transcripts.js';
import { exported, hostileHome, OTLP_ONLY, runCaughtUp, runMeasured, terminate, writeSession, type HostileHome } from './sources-helpers.js';

describe('symlinks leading out of the transcript roots (slow: the real CLI)', () => {
  let h: HostileHome;
  afterEach(() => h.cleanup());

  /** A file outside every root whose lines would be skipped (and exported) if it were read. */
  function outsideFile(): { path: string; marker: string } {
    const marker = `outside-the-root-${randomBytes(8).toString('hex')}`;
    const path = join(h.home, 'elsewhere', 'private.txt');
    mkdirSync(dirname(path), { recursive: true });
    writeFileSync(path, `${marker} line one\n${marker} line two\n`);
    return { path, marker };
  }

  it('backfill and run read neither a transcript link nor a shell log link out of the roots; an in-root alias is read once', async () => {
    assertBuilt();
    h = await hostileHome('escape');
    const { path: outside, marker } = outsideFile();
    const transcript = writeSession(h, 'escape-a', 2);
    const project = dirname(transcript);
    symlinkSync(outside, join(project, 'x.jsonl'));
    mkdirSync(join(project, 'escape-a', 'subagents'), { recursive: true });
    symlinkSync(outside, join(project, 'escape-a', 'subagents', 'agent-x.jsonl'));
    symlinkSync(transcript, join(project, 'alias.jsonl'));
    const shellDir = join(h.home, 'state', 'shell');
    mkdirSync(shellDir, { recursive: true });
    symlinkSync(outside, join(shellDir, 'escape-a.jsonl'));

    const backfill = await runMeasured(['backfill', '--json', '--no-progress', ...OTLP_ONLY(h)], h.env);
    expect(backfill.code, backfill.stderr).toBe(0);
    // Only the real transcript, once: neither link's target nor the alias.
    expect(JSON.parse(backfill.stdout)).toMatchObject({ files: 1, lines: 2 * 4, skipped: {} });
    expect(backfill.stderr).toContain(`${join(project, 'x.jsonl')} is a symlink to ${outside}`);
    expect(backfill.stderr).not.toContain('alias.jsonl');
    expect(h.stub.bodies.length).toBeGreaterThan(0);
    expect(exported(h, marker)).toBe(false);

    const sidecar = await runCaughtUp(h, 1);
    // A link created while it runs is not read either.
    symlinkSync(outside, join(project, 'late.jsonl'));
    writeSession(h, 'escape-a', 1);
    await waitFor('the appended turn', async () => (await transcriptStatus(h.env, 'none'))?.bytesBehind === 0, 60_000);
    await waitFor('the late link reported', () => sidecar.output().includes(`${join(project, 'late.jsonl')} is a symlink`), 30_000);
    expect(await terminate(sidecar)).toBe(0);
    expect(sidecar.output()).toContain(`not reading ${join(shellDir, 'escape-a.jsonl')}: a symlink`);
    expect(exported(h, marker)).toBe(false);
  }, 300_000);
});
