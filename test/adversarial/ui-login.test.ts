// Issue 28, row 5: a browser sends its 127.0.0.1 cookies to every port of 127.0.0.1 (cookies are per host),
// so the web view's login must be bound to the view's own port and start, and expire. Two real `ccotel ui`
// (build first) on one store, one of them restarted on its port; the expiry with an injected clock.
import type { IncomingMessage } from 'node:http';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { UiLogin } from '../../sidecar/src/ui/auth.js';
import { assertBuilt, runCli } from '../reliability/cli.js';
import { serve, stop, type Served } from '../ui/browser.js';

/** Log in through a login URL: the Set-Cookie header. */
async function logIn(loginUrl: string): Promise<string> {
  const answer = await fetch(loginUrl, { redirect: 'manual' });
  expect(answer.status).toBe(303);
  return answer.headers.get('set-cookie')!;
}

const pair = (setCookie: string): string => setCookie.split(';')[0];
const meta = async (served: Served, cookie: string): Promise<number> => (await fetch(`${served.base}/api/meta`, { headers: { cookie } })).status;

describe('the web view login is bound to its port and start', () => {
  const root = mkdtempSync(join(tmpdir(), 'ccotel-adv-login-'));
  const env = { ...process.env, HOME: join(root, 'home'), CLAUDE_CONFIG_DIR: join(root, 'claude'), CCOTEL_STATE_DIR: join(root, 'state') };
  const store = join(root, 'store');
  let a: Served;
  let b: Served;

  beforeAll(async () => {
    assertBuilt();
    // A reader needs a store: backfill makes one (of no history here).
    expect((await runCli(['backfill', '--no-progress', '--store', store], env, 120_000)).status).toBe(0);
    a = await serve(['ui', '--store', store], env);
    // The second view reads the store through the first one's endpoint.
    b = await serve(['ui', '--store', store], env);
  }, 180_000);

  afterAll(async () => {
    await stop(b?.child);
    await stop(a?.child);
    rmSync(root, { recursive: true, force: true });
  });

  it('II.5: a cookie of one view is useless on another port, and both logins live side by side in one browser', async () => {
    const [fromA, fromB] = [await logIn(a.loginUrl), await logIn(b.loginUrl)];
    expect(await meta(b, pair(fromA))).toBe(401);
    expect(await meta(a, pair(fromB))).toBe(401);
    // A browser keeps one cookie per name and host, whatever the port, and sends them all to each port.
    const jar = new Map([fromA, fromB].map((header) => [pair(header).split('=')[0], pair(header)]));
    const sent = [...jar.values()].join('; ');
    expect(await meta(a, sent)).toBe(200);
    expect(await meta(b, sent)).toBe(200);
    expect(pair(fromA).split('=')[0]).toContain(new URL(a.base).port);
    expect(fromA).toMatch(/; Max-Age=\d+/);
  });

  it('II.5: a restart on the same port invalidates the cookies of the earlier start', async () => {
    // `--login-url` asks the view started last, b.
    const fresh = await runCli(['ui', '--login-url'], env);
    const cookie = pair(await logIn(fresh.stdout.trim()));
    expect(await meta(b, cookie)).toBe(200);
    const port = new URL(b.base).port;
    await stop(b.child);
    b = await serve(['ui', '--store', store, '--port', port], env);
    expect(b.base).toBe(`http://127.0.0.1:${port}`);
    expect(await meta(b, cookie)).toBe(401);
    expect(await meta(b, pair(await logIn(b.loginUrl)))).toBe(200);
  }, 120_000);

  it('II.5: a login expires after its lifetime (hours), and its cookie says so (Max-Age)', () => {
    let now = Date.parse('2026-12-04T12:00:00Z');
    const hours = 8;
    const login = new UiLogin(41_000, hours * 3_600_000, () => now);
    const setCookie = login.exchange(login.code)!;
    expect(setCookie).toContain(`Max-Age=${hours * 3600}`);
    const request = { headers: { cookie: pair(setCookie) } } as IncomingMessage;
    expect(login.authorized(request)).toBe(true);
    now += hours * 3_600_000 - 1_000;
    expect(login.authorized(request)).toBe(true);
    now += 1_000;
    expect(login.authorized(request)).toBe(false);
    // A later expiry written into the cookie is refused.
    const [name, value] = pair(setCookie).split('=');
    const later = value.replace(/^\d+/, String(now + 3_600_000));
    expect(login.authorized({ headers: { cookie: `${name}=${later}` } } as IncomingMessage)).toBe(false);
  });
});
