// Who may post to the receiver (sources/otlp-receiver.ts). Bound to loopback it takes what local processes send,
// as a local Collector does; bound beyond it (`run --listen`, a team's receiver for other hosts' sidecars) it needs
// a token, sent as `Authorization: Bearer <token>` (OTEL_EXPORTER_OTLP_HEADERS on the sender). The token comes from
// a file only its owner can read, or the environment (never the command line, which `ps` shows every user); when
// one is set, loopback senders need it too.
import { createHash, timingSafeEqual } from 'node:crypto';
import { readFileSync, statSync } from 'node:fs';
import { isIP } from 'node:net';

export interface ListenAddress {
  host: string;
  port: number;
}

/** Long enough that guessing it over the network is hopeless (`openssl rand -hex 32` gives 64). */
const MIN_TOKEN_LENGTH = 32;

/** `HOST:PORT`, `[IPv6]:PORT`. */
export function parseListen(address: string): ListenAddress {
  const match = /^(?:\[([^\]]+)\]|([^:[\]]+)):(\d{1,5})$/.exec(address.trim());
  const port = Number(match?.[3]);
  if (!match || port > 65_535) throw new Error(`--listen takes HOST:PORT (or [IPv6]:PORT), not ${JSON.stringify(address)}`);
  return { host: match[1] ?? match[2], port };
}

/** 127.0.0.0/8, ::1 and localhost: reachable from this host only. */
export function isLoopback(host: string): boolean {
  if (host === 'localhost' || host === '::1') return true;
  return isIP(host) === 4 && host.startsWith('127.');
}

/** The URL a sender uses for `address`. */
export const urlOf = ({ host, port }: ListenAddress) => `http://${isIP(host) === 6 ? `[${host}]` : host}:${port}`;

/**
 * The receiver's token: `CCOTEL_RECEIVER_TOKEN`, or the content of `tokenFile` (which must be the owner's alone);
 * undefined when neither is set. Refused when shorter than MIN_TOKEN_LENGTH.
 */
export function loadReceiverToken(tokenFile: string, env: Record<string, string | undefined>): string | undefined {
  let token = env.CCOTEL_RECEIVER_TOKEN;
  let from = 'CCOTEL_RECEIVER_TOKEN';
  if (token === undefined && tokenFile !== '') {
    const mode = statSync(tokenFile).mode;
    if ((mode & 0o077) !== 0) throw new Error(`${tokenFile} holds the receiver's token and may be read by others (mode ${(mode & 0o777).toString(8)}): chmod 600 it`);
    token = readFileSync(tokenFile, 'utf8');
    from = tokenFile;
  }
  if (token === undefined) return undefined;
  token = token.trim();
  if (token.length < MIN_TOKEN_LENGTH) throw new Error(`the receiver's token (${from}) must have at least ${MIN_TOKEN_LENGTH} characters (e.g. openssl rand -hex 32)`);
  return token;
}

/** A request's `Authorization` header against the token, in time independent of where they differ. */
export function authorized(header: string | undefined, token: string): boolean {
  const given = /^Bearer\s+(.+)$/i.exec(header?.trim() ?? '')?.[1] ?? '';
  // Digests, so the comparison also takes the same time whatever the lengths.
  const digest = (text: string) => createHash('sha256').update(text).digest();
  return timingSafeEqual(digest(given), digest(token)) && given.length > 0;
}
