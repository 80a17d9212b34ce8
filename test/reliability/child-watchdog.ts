// What a child that runs far longer than it should is doing, printed while it runs: a rare hang under CI's load
// then shows where it stopped instead of only a hook's timeout. Linux's /proc for its threads; gdb, where the
// machine has it, for every thread's native stack (the engine's library has no symbols: its frames show as the
// library's name); Node's diagnostic report (--report-on-signal, SIGUSR2) for its JavaScript stack and open
// handles, when its main thread answers.
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';

/** Each thread's name, state (R running, S sleeping, D in I/O), kernel wait channel and CPU ticks. */
function threads(pid: number): string[] {
  try {
    return readdirSync(`/proc/${pid}/task`).map((tid) => {
      const read = (name: string) => { try { return readFileSync(`/proc/${pid}/task/${tid}/${name}`, 'utf8').trim(); } catch { return '?'; } };
      const stat = read('stat').replace(/^.*\) /, '').split(' ');
      return `${read('comm')} ${stat[0]} ${read('wchan')} cpu=${Number(stat[11]) + Number(stat[12])}`;
    });
  } catch {
    return ['(gone)'];
  }
}

const GDB = '/usr/bin/gdb';

/** Each thread's name and its innermost frames (function, else the library), identical threads counted once. */
function nativeStacks(pid: number): Promise<string> {
  if (!existsSync(GDB)) return Promise.resolve('no gdb');
  return new Promise((resolveStacks) => {
    execFile(GDB, ['-p', String(pid), '-batch', '-ex', 'thread apply all bt 10'], { timeout: 60_000, maxBuffer: 16 << 20 }, (_error, stdout) => {
      const counted = new Map<string, number>();
      const waiting = (frame: string) => /^_{2,}|^do_futex_wait$/.test(frame);
      for (const block of stdout.split(/^Thread /m).slice(1)) {
        const name = /"([^"]*)"\)/.exec(block)?.[1] ?? '?';
        const frames = block.split('\n').filter((line) => line.startsWith('#')).map((line) => {
          const called = /\bin (\S+) \(/.exec(line)?.[1] ?? /^#\d+\s+(\S+) \(/.exec(line)?.[1] ?? '?';
          return called === '??' ? (/from \S*\/([^/\s]+)$/.exec(line)?.[1] ?? called) : called;
        });
        // glibc's futex and condition-variable wrappers say only "waiting": the last of them is enough.
        const line = `${name}: ${frames.filter((frame, index) => !waiting(frame) || !waiting(frames[index + 1] ?? '')).join(' < ')}`;
        counted.set(line, (counted.get(line) ?? 0) + 1);
      }
      resolveStacks([...counted].map(([line, count]) => `${count} × ${line}`).join('\n') || 'gdb gave no stacks');
    });
  });
}

/** The report's JavaScript stack and active handles; undefined when the child wrote none (its main thread is busy or blocked). */
async function report(pid: number, directory: string): Promise<string | undefined> {
  try { process.kill(pid, 'SIGUSR2'); } catch { return undefined; }
  for (let waited = 0; waited < 5_000; waited += 250) {
    await sleep(250);
    try {
      const file = readdirSync(directory).find((name) => name.endsWith('.json'));
      if (!file) continue;
      const parsed = JSON.parse(readFileSync(join(directory, file), 'utf8')) as { javascriptStack?: { message?: string; stack?: string[] }; libuv?: { type: string; is_active: boolean; details?: string }[] };
      const handles = (parsed.libuv ?? []).filter((handle) => handle.is_active).map((handle) => `${handle.type}${handle.details ? ` ${handle.details}` : ''}`);
      return `js: ${parsed.javascriptStack?.message ?? ''} ${(parsed.javascriptStack?.stack ?? []).slice(0, 12).join(' | ')}\nactive handles: ${handles.join('; ')}`;
    } catch {
      continue; // still being written, or the watch stopped
    }
  }
  return undefined;
}

/**
 * A watch of one node child: start it with `flags`, then `watch(pid)`; after `afterMs` the child's threads are printed
 * twice, 2 s apart (busy or stuck), with its report if it gives one, and the child is left running. `stop` ends it.
 */
export function childWatch(label: string, afterMs: number): { flags: string[]; watch: (pid: number | undefined) => void; stop: () => void } {
  const directory = mkdtempSync(join(tmpdir(), 'ccotel-child-report-'));
  let timer: NodeJS.Timeout | undefined;
  let stopped = false;
  const watch = (pid: number | undefined) => {
    if (pid === undefined) return;
    timer = setTimeout(async () => {
      const first = threads(pid);
      await sleep(2_000);
      const second = threads(pid);
      const stacks = await nativeStacks(pid);
      const written = await report(pid, directory);
      if (!stopped) {
        console.error(`[watchdog] ${label} (pid ${pid}) still running after ${afterMs / 1000} s\nthreads: ${first.join(', ')}\n2 s later: ${second.join(', ')}\n` +
          `native stacks:\n${stacks}\n${written ?? 'no report: its main thread did not answer'}`);
      }
    }, afterMs);
    timer.unref();
  };
  return {
    flags: ['--report-on-signal', `--report-directory=${directory}`],
    watch,
    stop: () => { stopped = true; clearTimeout(timer); rmSync(directory, { recursive: true, force: true }); },
  };
}
