// Where `ccotel ui --login-url` finds the running web view: its URL, pid and the bearer token that mints login
// codes, in a file of the state directory readable by its owner only (as the installation key), removed
// when the view stops. Whoever can read it can already read the store.
import { readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { isAlive } from '../process-alive.js';
import { writeFileAtomic } from '../sources/state-file.js';
import type { UiServer } from './server.js';

interface UiRecord {
  pid: number;
  url: string;
  minter: string;
}

const recordPath = (stateDir: string): string => join(stateDir, 'ui.json');

function readRecord(stateDir: string): UiRecord | undefined {
  try {
    return JSON.parse(readFileSync(recordPath(stateDir), 'utf8')) as UiRecord;
  } catch {
    return undefined;
  }
}

/**
 * Record `ui` as the state directory's web view (the latest started wins). Returns what removes the record,
 * if it is still this process's. A record that cannot be written costs only `--login-url`: `warn` says so.
 */
export function recordUi(stateDir: string, ui: UiServer, warn: (message: string) => void): () => void {
  const path = recordPath(stateDir);
  try {
    writeFileAtomic(path, JSON.stringify({ pid: process.pid, url: ui.url, minter: ui.loginMinter } satisfies UiRecord), false);
  } catch (error) {
    warn(`cannot record the web view in ${path} (${(error as Error).message}): ccotel ui --login-url will not find it`);
  }
  return () => {
    if (readRecord(stateDir)?.pid === process.pid) rmSync(path, { force: true });
  };
}

/** A new one-time login URL from the web view running for `stateDir`. */
export async function freshLoginUrl(stateDir: string): Promise<string> {
  const record = readRecord(stateDir);
  if (!record || !isAlive(record.pid)) {
    throw new Error(`no web view is running for the state directory ${stateDir}: start one with ccotel ui (or ccotel run --ui)`);
  }
  const response = await fetch(`${record.url}/login/new`, { method: 'POST', headers: { authorization: `Bearer ${record.minter}` } }).catch((error: Error) => {
    throw new Error(`the web view at ${record.url} (pid ${record.pid}) does not answer: ${error.message}`);
  });
  if (!response.ok) throw new Error(`the web view at ${record.url} refused a new login URL (HTTP ${response.status})`);
  return (await response.text()).trim();
}
