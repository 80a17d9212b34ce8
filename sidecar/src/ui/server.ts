// The web view's HTTP server: 127.0.0.1 only, the bundled page and its JSON API, every request but the
// login behind the session cookie. A failed query answers 500 with the message, which the page shows.
import type { InsightThresholds } from '../config.js';
import { readFileSync } from 'node:fs';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import type { ClickHouseClient } from '@clickhouse/client';
import { connectionCap, guardedServer, HEADERS_TIMEOUT_MS } from '../connection-guard.js';
import { bearerSecret, sameSecret, UiLogin } from './auth.js';
import { UiData } from './data.js';
import type { Meta, TimeRange } from './types.js';

export const ASSETS_DIR = join(import.meta.dirname, 'assets');

export interface UiServerOptions {
  client: ClickHouseClient;
  /** The store's database (the usage views name their tables with it). */
  database: string;
  /** 0: a random free port. */
  port?: number;
  /** The store is written while we serve it: pages refresh themselves. */
  live: boolean;
  store: string;
  refreshMs?: number;
  /** The thresholds of the Insights page (the configuration's insight_* settings). */
  insights?: InsightThresholds;
}

export interface UiServer {
  url: string;
  /** Open once: logs the browser in. */
  loginUrl: string;
  /** Bearer token of `POST /login/new`, which answers a fresh login URL (ccotel ui --login-url). */
  loginMinter: string;
  close(): Promise<void>;
}

const CONTENT_TYPES: Record<string, string> = { '.js': 'text/javascript; charset=utf-8', '.css': 'text/css; charset=utf-8', '.html': 'text/html; charset=utf-8' };
const SECURITY_HEADERS = {
  'Content-Security-Policy': "default-src 'self'; img-src 'self' data:; frame-ancestors 'none'",
  'X-Content-Type-Options': 'nosniff',
  'Referrer-Policy': 'no-referrer',
  'Cache-Control': 'no-store',
};

/** The bundled files (npm run build), read once. */
export function readAsset(name: 'index.html' | 'app.js' | 'app.css'): string {
  try {
    return readFileSync(join(ASSETS_DIR, name), 'utf8');
  } catch {
    throw new Error(`the web view's files are missing (${join(ASSETS_DIR, name)}): run npm run build`);
  }
}

export async function startUiServer(options: UiServerOptions): Promise<UiServer> {
  const assets = { '/': readAsset('index.html'), '/assets/app.js': readAsset('app.js'), '/assets/app.css': readAsset('app.css') } as Record<string, string>;
  const minter = bearerSecret();
  const data = new UiData(options.client, options.database, options.insights);
  const meta: Meta = { live: options.live, store: options.store, refreshMs: options.refreshMs ?? 10_000 };
  // The same bounds as the query endpoint's; a logged-in page keeps its connection while it is answered.
  const server = guardedServer({ maxConnections: connectionCap(), headersTimeoutMs: HEADERS_TIMEOUT_MS }, (request) => login.authorized(request), (request, response) => {
    handle(request, response).catch((error: Error) => {
      if (response.headersSent) response.destroy(error);
      else send(response, 500, 'text/plain; charset=utf-8', `${error.message}\n`);
    });
  });
  await new Promise<void>((resolveListen, rejectListen) => {
    server.once('error', rejectListen);
    server.listen(options.port ?? 0, '127.0.0.1', () => resolveListen());
  });
  const { port } = server.address() as AddressInfo;
  const origin = `http://127.0.0.1:${port}`;
  // Bound to the port: known once listening, before any request is read.
  const login = new UiLogin(port);
  const cached = answerCache(() => data.version());
  const api: Record<string, (url: URL) => Promise<unknown>> = {
    '/api/meta': async () => meta,
    '/api/overview': cached((url) => data.overview(rangeOf(url))),
    '/api/sessions': cached((url) => data.sessions(rangeOf(url))),
    '/api/failures': cached((url) => data.failures(rangeOf(url))),
    '/api/insights': cached((url) => data.insights(rangeOf(url))),
    '/api/session': cached((url) => data.session(url.searchParams.get('id') ?? '')),
  };
  const handle = async (request: IncomingMessage, response: ServerResponse) => {
    const url = new URL(request.url ?? '/', origin);
    // A page of another site reaching 127.0.0.1 through its own host name (DNS rebinding) is refused.
    if (request.headers.host !== new URL(origin).host) return send(response, 421, 'text/plain; charset=utf-8', 'wrong host\n');
    if (url.pathname === '/login') {
      const cookie = login.exchange(url.searchParams.get('code'));
      if (!cookie) return send(response, 401, 'text/plain; charset=utf-8', 'This login link is not valid or was used already; ccotel ui --login-url prints a new one.\n');
      response.writeHead(303, { ...SECURITY_HEADERS, 'Set-Cookie': cookie, Location: '/' }).end();
      return;
    }
    if (url.pathname === '/login/new') {
      const bearer = /^Bearer (.+)$/.exec(request.headers.authorization ?? '')?.[1];
      if (request.method !== 'POST' || !sameSecret(bearer, minter.digest)) return send(response, 401, 'text/plain; charset=utf-8', 'not allowed\n');
      return send(response, 200, 'text/plain; charset=utf-8', `${origin}/login?code=${login.newCode()}\n`);
    }
    if (!login.authorized(request)) return send(response, 401, 'text/plain; charset=utf-8', 'Not logged in, or the login expired: open the login URL that ccotel ui printed, or a new one from ccotel ui --login-url.\n');
    const asset = assets[url.pathname];
    if (asset !== undefined) return send(response, 200, CONTENT_TYPES[url.pathname.slice(url.pathname.lastIndexOf('.'))] ?? CONTENT_TYPES['.html'], asset);
    const answer = api[url.pathname];
    if (!answer) return send(response, 404, 'text/plain; charset=utf-8', 'not found\n');
    try {
      send(response, 200, 'application/json', JSON.stringify(await answer(url)));
    } catch (error) {
      send(response, 500, 'application/json', JSON.stringify({ error: explain(error as Error) }));
    }
  };
  return {
    url: origin,
    loginUrl: `${origin}/login?code=${login.code}`,
    loginMinter: minter.secret,
    close: () =>
      new Promise<void>((resolveClose) => {
        server.close(() => resolveClose());
        server.closeAllConnections();
      }),
  };
}

const CACHED_ANSWERS = 32;

/**
 * Answers kept while the store's content is the same: a live page refreshing while nothing arrives costs one
 * cheap query, not the report's. Keyed by the request (path and range), the oldest dropped first.
 */
function answerCache(version: () => Promise<string>) {
  const answers = new Map<string, { version: string; value: unknown }>();
  return (answer: (url: URL) => Promise<unknown>) => async (url: URL) => {
    const key = url.pathname + url.search;
    const current = await version();
    const hit = answers.get(key);
    if (hit?.version === current) return hit.value;
    const value = await answer(url);
    answers.delete(key);
    answers.set(key, { version: current, value });
    if (answers.size > CACHED_ANSWERS) answers.delete(answers.keys().next().value!);
    return value;
  };
}

/** The query's error, with what a refused connection means here. */
function explain(error: Error): string {
  // Refused: nothing listens any more; reset: it went away while answering (run stopping mid-query).
  if (!/ECONNREFUSED|ECONNRESET/.test(error.message)) return error.message;
  return `${error.message}: the store's server, or the ccotel run serving this store, is not answering (restart ccotel ui once it is back)`;
}

function send(response: ServerResponse, status: number, contentType: string, body: string): void {
  response.writeHead(status, { ...SECURITY_HEADERS, 'Content-Type': contentType }).end(body);
}

function rangeOf(url: URL): TimeRange {
  const bound = (name: string) => {
    const value = url.searchParams.get(name);
    if (value === null || value === '') return undefined;
    const ms = Number(value);
    if (!Number.isFinite(ms)) throw new Error(`${name}: not a time in ms: ${value}`);
    return ms;
  };
  return { fromMs: bound('from'), toMs: bound('to') };
}
