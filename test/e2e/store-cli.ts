// The built CLI against one store, as end-to-end tests drive it (each call its own process, so each test may
// use its own embedded store).
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';

export const CLI = join(import.meta.dirname, '..', '..', 'dist', 'sidecar', 'src', 'cli.js');

/** `ccotel <args> --store <dir>`, and SQL answers as rows (64-bit numbers unquoted). `env` is read at each call. */
export function storeCli(storeDir: string, env: () => NodeJS.ProcessEnv) {
  const ccotel = (...args: string[]): string =>
    execFileSync(process.execPath, [CLI, ...args, '--store', storeDir], { env: env(), encoding: 'utf8' });
  const query = <T>(sql: string): T[] =>
    ccotel('query', `${sql} SETTINGS output_format_json_quote_64bit_integers = 0`, '--format', 'JSONEachRow')
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
export function writeToStore(storeDir: string, sql: string, env: NodeJS.ProcessEnv): void {
  const script = `const { openStore } = await import(${JSON.stringify(OPEN_STORE)});
    const store = await openStore(process.argv[1], { command: 'test', access: 'write', rawTtlDays: 0 });
    try { await store.client.command({ query: process.argv[2] }); } finally { await store.close(); }`;
  execFileSync(process.execPath, ['--input-type=module', '-e', script, storeDir, sql], { env, encoding: 'utf8' });
}
