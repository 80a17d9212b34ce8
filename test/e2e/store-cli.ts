// The built CLI against one store, as end-to-end tests drive it (each call its own process, so each test may
// use its own embedded store).
import { join } from 'node:path';
import { childWatch } from '../reliability/child-watchdog.js';
import { CLI, runProcess } from '../reliability/cli.js';

/** No limit but the test's own timeout: a backfill on a loaded machine may take minutes. */
const NO_TIMEOUT = 0;
/** After this long a child's threads and stack are printed (it takes seconds here; CI once hung in a test's setup). */
const WATCH_AFTER_MS = 90_000;

/** `node args` (a script and its arguments), its stdout; a clear error with its stderr when it fails. */
async function stdoutOf(args: string[], env: NodeJS.ProcessEnv): Promise<string> {
  const label = args.slice(0, 3).join(' ').slice(0, 160);
  const watch = childWatch(label, WATCH_AFTER_MS);
  try {
    const result = await runProcess(process.execPath, [...watch.flags, ...args], env, NO_TIMEOUT, (child) => watch.watch(child.pid));
    if (result.status !== 0) throw new Error(`${label} exited with ${result.status}: ${result.stderr}`);
    return result.stdout;
  } finally {
    watch.stop();
  }
}

/** `ccotel <args> --store <dir>`, and SQL answers as rows (64-bit numbers unquoted). `env` is read at each call. */
export function storeCli(storeDir: string, env: () => NodeJS.ProcessEnv) {
  const ccotel = (...args: string[]): Promise<string> => stdoutOf([CLI, ...args, '--store', storeDir], env());
  const query = async <T>(sql: string): Promise<T[]> =>
    (await ccotel('query', `${sql} SETTINGS output_format_json_quote_64bit_integers = 0`, '--format', 'JSONEachRow'))
      .split('\n')
      .filter(Boolean)
      .map((line) => JSON.parse(line) as T);
  return { ccotel, query };
}

const OPEN_STORE = join(import.meta.dirname, '..', '..', 'dist', 'sidecar', 'src', 'store', 'open-store.js');

/**
 * Runs one writing statement on an embedded store, in a process of its own (an embedded store belongs to one
 * process, and `ccotel query` is read-only): for tests that plant rows no input produces, e.g. a detection.
 */
export async function writeToStore(storeDir: string, sql: string, env: NodeJS.ProcessEnv): Promise<void> {
  const script = `const { openStore } = await import(${JSON.stringify(OPEN_STORE)});
    const store = await openStore(process.argv[1], { command: 'test', access: 'write', rawTtlDays: 0 });
    try { await store.client.command({ query: process.argv[2] }); } finally { await store.close(); }`;
  await stdoutOf(['--input-type=module', '-e', script, storeDir, sql], env);
}
