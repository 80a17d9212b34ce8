// The built CLI against one store, as end-to-end tests drive it (each call its own process, so each test may
// use its own embedded store).
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { join } from 'node:path';

export const CLI = join(import.meta.dirname, '..', '..', 'dist', 'sidecar', 'src', 'cli.js');

// Children run without blocking this process: a test worker blocked for a minute (a synchronous child on a
// loaded machine) misses its runner's replies, and vitest fails the run.
const run = promisify(execFile);

/** `ccotel <args> --store <dir>`, and SQL answers as rows (64-bit numbers unquoted). `env` is read at each call. */
export function storeCli(storeDir: string, env: () => NodeJS.ProcessEnv) {
  const ccotel = async (...args: string[]): Promise<string> =>
    (await run(process.execPath, [CLI, ...args, '--store', storeDir], { env: env(), encoding: 'utf8', maxBuffer: 256 << 20 })).stdout;
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
  await run(process.execPath, ['--input-type=module', '-e', script, storeDir, sql], { env, encoding: 'utf8' });
}
