import { spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { Pipeline } from '../pipeline.js';
import { HookCorrelator } from '../processors/correlate-hooks.js';
import type { HookEvent } from '../records/hook-spool.js';
import { TranscriptCorrelator } from '../processors/transcripts/correlator.js';
import { HookSpoolSource } from './hook-spool-source.js';
import { MemorySink } from '../../../test/helpers/memory-sink.js';
import { spoolHookHandler } from '../install/hooks.js';
import { packagedScriptPath } from '../install/scripts.js';

/** Keeps what it was given; fails while `failing` is set (a sink that is down). */
const SESSION = 'aaaaaaaa-0000-4000-8000-000000000001';
const nameAt = (ns: bigint, pid = 100) => `${ns.toString().padStart(20, '0')}-${pid}-0a1b2c3d.json`;
const T0 = 1_790_000_000_000_000_000n;

function setup({ spoolExists = true, safetyPollMs }: { spoolExists?: boolean; safetyPollMs?: number } = {}) {
  const state = mkdtempSync(join(tmpdir(), 'ccotel-spool-'));
  const spoolDir = join(state, 'spool');
  if (spoolExists) mkdirSync(spoolDir);
  const sink = new MemorySink();
  const seen: HookEvent[] = [];
  const hooks = new HookCorrelator({ contentLevel: 'masked' });
  const pipeline = new Pipeline(new TranscriptCorrelator(), [], [sink], [hooks]);
  const source = new HookSpoolSource({
    spoolDir,
    deadLetterDir: join(state, 'dead-letter'),
    hookDroppedPath: join(state, 'hook-dropped'),
    pipeline,
    maskText: async (text) => text.replaceAll('hunter2', '[MASKED]'),
    safetyPollMs,
    emit: (read, ack) => {
      const event = { ...read, ack };
      seen.push(event);
      hooks.add(event);
    },
  });
  const write = (name: string, payload: object | string) => writeFileSync(join(spoolDir, name), typeof payload === 'string' ? payload : JSON.stringify(payload));
  return { state, spoolDir, sink, seen, hooks, pipeline, source, write };
}

describe('HookSpoolSource', () => {
  it('reads spool files in firing order, skipping .tmp- files and deleting only stale ones', () => {
    const { spoolDir, seen, source, write } = setup();
    // Written out of order: the name (fired-at ns) decides.
    write(nameAt(T0 + 3_000_000n), { session_id: SESSION, hook_event_name: 'Stop' });
    write(nameAt(T0 + 1_000_000n), { session_id: SESSION, hook_event_name: 'SessionStart', source: 'startup' });
    write(nameAt(T0 + 2_000_000n), { session_id: SESSION, hook_event_name: 'UserPromptSubmit', prompt: 'hi' });
    write('.tmp-fresh', '{"session_id":');
    write('.tmp-stale', '{"session_id":');
    const old = (Date.now() - 3_600_000) / 1000;
    utimesSync(join(spoolDir, '.tmp-stale'), old, old);
    expect(source.scan()).toBe(3);
    expect(seen.map((event) => event.payload.hook_event_name)).toEqual(['SessionStart', 'UserPromptSubmit', 'Stop']);
    expect(seen[0].firedAtMs).toBe(Number((T0 + 1_000_000n) / 1_000_000n));
    expect(existsSync(join(spoolDir, '.tmp-fresh'))).toBe(true);
    expect(existsSync(join(spoolDir, '.tmp-stale'))).toBe(false);
    // In flight until acknowledged: a second scan does not hand them over again.
    expect(source.scan()).toBe(0);
  });

  it('orders files the hook wrote in place by their time, then pid; one still being written waits, then counts as broken', () => {
    const { spoolDir, seen, source, write } = setup();
    const nowMs = Math.floor(Date.now() / 1000) * 1000; // whole seconds: file times keep them exactly
    const at = (name: string, ms: number) => utimesSync(join(spoolDir, name), ms / 1000, ms / 1000);
    write('300-0a1b2c3d-0001.json', { session_id: SESSION, hook_event_name: 'Stop' });
    at('300-0a1b2c3d-0001.json', nowMs - 2_000);
    // The same (coarse) time: the later-spawned hook, by pid, comes second.
    write('201-0a1b2c3d-0002.json', { session_id: SESSION, hook_event_name: 'UserPromptSubmit', prompt: 'hi' });
    write('200-0a1b2c3d-0003.json', { session_id: SESSION, hook_event_name: 'SessionStart', source: 'startup' });
    at('201-0a1b2c3d-0002.json', nowMs - 3_000);
    at('200-0a1b2c3d-0003.json', nowMs - 3_000);
    // Half written a moment ago: not yet a broken file.
    write('400-0a1b2c3d-0004.json', '{"session_id":"');
    at('400-0a1b2c3d-0004.json', nowMs - 100);

    expect(source.scan(nowMs)).toBe(3);
    expect(seen.map((event) => event.payload.hook_event_name)).toEqual(['SessionStart', 'UserPromptSubmit', 'Stop']);
    expect(seen[0].firedAtMs).toBe(nowMs - 3_000);
    expect(seen[0].hookPid).toBe(200);
    expect(source.stats.deadLettered).toBe(0);

    // Finished meanwhile: read like any other.
    write('400-0a1b2c3d-0004.json', { session_id: SESSION, hook_event_name: 'Notification' });
    at('400-0a1b2c3d-0004.json', nowMs + 50);
    expect(source.scan(nowMs + 100)).toBe(1);
    // One that stays cut off past the settle time is broken.
    write('500-0a1b2c3d-0005.json', '{"session_id":"');
    at('500-0a1b2c3d-0005.json', nowMs - 10_000);
    expect(source.scan(nowMs)).toBe(0);
    expect(source.stats.deadLettered).toBe(1);
  });

  it('keeps a file that is not a hook payload masked in the dead-letter dir and reports it', async () => {
    const { state, spoolDir, sink, source, write, pipeline } = setup();
    write(nameAt(T0), '{"session_id": "cut off, password hunter2');
    write(nameAt(T0 + 1n), '[1,2]');
    write(nameAt(T0 + 2n), { hook_event_name: 'Stop' });
    expect(source.scan()).toBe(0);
    await pipeline.flush();
    await source.settle();
    expect(readdirSync(spoolDir)).toEqual([]);
    expect(readdirSync(join(state, 'dead-letter', 'hooks')).sort()).toEqual([nameAt(T0), nameAt(T0 + 1n), nameAt(T0 + 2n)]);
    expect(readFileSync(join(state, 'dead-letter', 'hooks', nameAt(T0)), 'utf8')).toBe('{"session_id": "cut off, password [MASKED]');
    const skipped = sink.received.logs.filter((log) => log.eventName === 'ccotel.record.skipped');
    expect(skipped.map((log) => log.attributes.reason)).toEqual(['malformed_json', 'not_object', 'missing_fields']);
    expect(skipped.every((log) => log.attributes['ccotel.source'] === 'hook')).toBe(true);
    const points = sink.received.metrics.filter((point) => point.name === 'ccotel.sidecar.records');
    expect(points.map((point) => point.attributes.result)).toEqual(['malformed_json', 'not_object', 'missing_fields']);
    expect(source.stats.deadLettered).toBe(3);
  });

  it('deletes a file only after the sinks accepted what was built from it', async () => {
    const { spoolDir, sink, source, write, pipeline } = setup();
    const name = nameAt(T0);
    write(name, { session_id: SESSION, hook_event_name: 'SessionEnd', reason: 'other' });
    source.scan();
    sink.failing = true;
    await expect(pipeline.flush()).rejects.toThrow('sink down');
    expect(readdirSync(spoolDir)).toEqual([name]);
    sink.failing = false;
    await pipeline.flush();
    expect(readdirSync(spoolDir)).toEqual([]);
    expect(sink.received.logs.map((log) => log.eventName).sort()).toEqual(['ccotel.hook.session_end', 'ccotel.session.ended']);
  });

  it('keeps files with consume: false (backfill --keep-spool)', async () => {
    const { spoolDir, write, pipeline, hooks, state } = setup();
    const keeping = new HookSpoolSource({ spoolDir, deadLetterDir: join(state, 'dl'), hookDroppedPath: join(state, 'hook-dropped'), pipeline, maskText: async (text) => text, emit: (event, ack) => hooks.add({ ...event, ack }), consume: false });
    write(nameAt(T0), { session_id: SESSION, hook_event_name: 'SessionEnd', reason: 'other' });
    keeping.scan();
    await pipeline.flush();
    expect(readdirSync(spoolDir)).toEqual([nameAt(T0)]);
  });

  it('reports each line of hook-dropped once as a health point', async () => {
    const { state, sink, source, pipeline } = setup();
    writeFileSync(join(state, 'hook-dropped'), `${T0} write\n${T0 + 5n} mkdir\n`);
    source.scan();
    writeFileSync(join(state, 'hook-dropped'), `${T0} write\n${T0 + 5n} mkdir\n${T0 + 9n} rename\n`);
    source.scan();
    await pipeline.flush();
    const dropped = sink.received.metrics.filter((point) => point.attributes.result === 'dropped');
    expect(dropped.map((point) => point.attributes.stage)).toEqual(['write', 'mkdir', 'rename']);
    expect(new Set(dropped.map((point) => point.id)).size).toBe(3);
    expect(dropped[0].name).toBe('ccotel.sidecar.records');
    expect(source.stats.dropped).toBe(3);
  });
});

describe('HookSpoolSource following the spool (start)', () => {
  /** Longer than any test: what is read was read because the spool changed, not by the safety poll. */
  const HOUR_MS = 3_600_000;
  const event = (prompt: string) => ({ session_id: SESSION, hook_event_name: 'UserPromptSubmit', prompt });
  const prompts = (seen: HookEvent[]) => seen.map((hook) => hook.payload.prompt);

  async function waitUntil(what: string, condition: () => boolean): Promise<void> {
    for (const deadline = Date.now() + 20_000; !condition(); await new Promise((resolveDelay) => setTimeout(resolveDelay, 20))) {
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    }
  }

  async function following(spoolExists: boolean) {
    const spool = setup({ spoolExists, safetyPollMs: HOUR_MS });
    spool.source.start();
    await new Promise((resolveDelay) => setTimeout(resolveDelay, 200)); // its first scan is over
    return spool;
  }

  it('reads an event written while it waits at once', async () => {
    const { seen, source, write } = await following(true);
    try {
      write(nameAt(T0), event('first'));
      await waitUntil('the event', () => seen.length === 1);
      expect(prompts(seen)).toEqual(['first']);
    } finally {
      await source.stop();
    }
  });

  it('reads at once from a spool created after the start (the first hook creates it)', async () => {
    const { seen, source, spoolDir, write } = await following(false);
    try {
      mkdirSync(spoolDir);
      write(nameAt(T0), event('first'));
      await waitUntil('the first event', () => seen.length === 1);
      write(nameAt(T0 + 1n), event('second'));
      await waitUntil('the second event', () => seen.length === 2);
      expect(prompts(seen)).toEqual(['first', 'second']);
    } finally {
      await source.stop();
    }
  });

  it('reads at once from a spool deleted and created again', async () => {
    const { seen, source, spoolDir, write } = await following(true);
    try {
      rmSync(spoolDir, { recursive: true });
      mkdirSync(spoolDir); // at once: often on the same inode number
      await new Promise((resolveDelay) => setTimeout(resolveDelay, 200));
      write(nameAt(T0), event('after'));
      await waitUntil('the event in the new spool', () => seen.length === 1);
      expect(prompts(seen)).toEqual(['after']);
    } finally {
      await source.stop();
    }
  });

  it('reads the agent a hook was installed for from the file its handler spooled (install-hooks --agent codex)', () => {
    const { state, spoolDir, seen, source, write } = setup();
    // The handlers as install-hooks writes them, run as the agent runs a command hook: `sh -c`, the payload on stdin.
    const binDir = join(state, 'bin');
    mkdirSync(binDir, { mode: 0o700 });
    copyFileSync(packagedScriptPath('hook'), join(binDir, 'ccotel-hook.sh'));
    const fire = (handler: { command?: string }, payload: object) => {
      const run = spawnSync('sh', ['-c', handler.command!], { input: JSON.stringify(payload), env: { PATH: process.env.PATH } });
      expect(run.status).toBe(0);
    };
    fire(spoolHookHandler(join(binDir, 'ccotel-hook.sh'), spoolDir, 'codex'), { session_id: SESSION, hook_event_name: 'SessionStart' });
    expect(source.scan()).toBe(1);
    fire(spoolHookHandler(join(binDir, 'ccotel-hook.sh'), spoolDir), { session_id: SESSION, hook_event_name: 'Stop' });
    // A name the sidecar does not know as an agent's (nor an object's own key) names none.
    write(`100-0a1b2c3d-0a1b-200-constructor.json`, { session_id: SESSION, hook_event_name: 'Stop' });
    expect(source.scan()).toBe(2);
    expect(seen.map((event) => [event.payload.hook_event_name, event.agent])).toEqual([
      ['SessionStart', 'codex'],
      ['Stop', undefined],
      ['Stop', undefined],
    ]);
  });
});
