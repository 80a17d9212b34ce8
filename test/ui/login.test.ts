// A login URL works once; `ccotel ui --login-url` asks the running view for another (authorized by a token in
// the state directory, readable by its owner only), and says clearly when no view is running.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CLI } from '../reliability/cli.js';
import { serve, stop, type Served } from './browser.js';

describe('ccotel ui --login-url', () => {
  const root = mkdtempSync(join(tmpdir(), 'ccotel-ui-login-'));
  const stateDir = join(root, 'state');
  const env = { ...process.env, HOME: join(root, 'home'), CLAUDE_CONFIG_DIR: join(root, 'claude'), CCOTEL_STATE_DIR: stateDir };
  let served: Served;
  const loginUrlCli = () => execFileSync(process.execPath, [CLI, 'ui', '--login-url'], { env, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], timeout: 60_000 }).trim();
  const logIn = (url: string) => fetch(url, { redirect: 'manual' });

  beforeAll(async () => {
    // A reader needs a store: backfill makes one (of no history here).
    execFileSync(process.execPath, [CLI, 'backfill', '--no-progress', '--store', join(root, 'store')], { env, stdio: 'ignore', timeout: 120_000 });
    served = await serve(['ui', '--store', join(root, 'store')], env);
  });

  afterAll(async () => {
    await stop(served?.child);
  });

  it('prints a new URL that logs a browser in once, while the first stays spent', async () => {
    expect((await logIn(served.loginUrl)).status).toBe(303);
    expect((await logIn(served.loginUrl)).status).toBe(401);
    const fresh = loginUrlCli();
    expect(fresh).toMatch(new RegExp(`^${served.base}/login\\?code=[\\w-]+$`));
    expect(fresh).not.toBe(served.loginUrl);
    const answer = await logIn(fresh);
    expect(answer.status).toBe(303);
    const cookie = answer.headers.get('set-cookie')!.split(';')[0];
    expect((await fetch(`${served.base}/api/meta`, { headers: { cookie } })).status).toBe(200);
    expect((await logIn(fresh)).status).toBe(401);
    // Each call mints its own code.
    const [one, two] = [loginUrlCli(), loginUrlCli()];
    expect(one).not.toBe(two);
    expect((await logIn(two)).status).toBe(303);
    expect((await logIn(one)).status).toBe(303);
    expect((statSync(join(stateDir, 'ui.json')).mode & 0o777).toString(8)).toBe('600');
  });

  it('mints nothing without the token, nor for a GET', async () => {
    const mint = `${served.base}/login/new`;
    expect((await fetch(mint, { method: 'POST' })).status).toBe(401);
    expect((await fetch(mint, { method: 'POST', headers: { authorization: 'Bearer guess' } })).status).toBe(401);
    expect((await fetch(mint)).status).toBe(401);
  });

  it('says no view is running once it stopped, and leaves no record behind', async () => {
    await stop(served.child);
    expect(existsSync(join(stateDir, 'ui.json'))).toBe(false);
    let message = '';
    try {
      loginUrlCli();
    } catch (error) {
      message = String((error as { stderr: string }).stderr);
    }
    expect(message).toContain('no web view is running for the state directory');
  });
});
