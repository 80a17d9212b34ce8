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
