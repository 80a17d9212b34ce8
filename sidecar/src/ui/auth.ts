// Login for the web view: the printed URL carries a one-time code, exchanged for a session cookie (HttpOnly,
// SameSite=Strict), so the secret that keeps working is never in the browser's history or a shell's scrollback.
// More codes are minted on request (`ccotel ui --login-url`, authorized by a secret only the state directory's
// owner can read: ui/login-record.ts), each working once. A browser sends its cookies for 127.0.0.1 to every
// port of it, so the cookie is bound to this view: named after its port, signed with a key of this start (with
// the port and start signed in), and valid for a lifetime of hours, after which `--login-url` logs in again.
import { createHash, createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage } from 'node:http';

/** The cookie is `ccotel_ui_<port>`: views on other ports keep their own. */
const COOKIE_PREFIX = 'ccotel_ui_';
/** How long a login lasts. */
export const LOGIN_LIFETIME_MS = 12 * 3_600_000;
/** Codes minted and not used yet, at most: a new one beyond it retires the oldest. */
const UNUSED_CODES = 16;

/** Fixed-length digests, so a comparison takes the same time whatever the guess. */
const digest = (secret: string): Buffer => createHash('sha256').update(secret).digest();
export const sameSecret = (given: string | undefined, expected: Buffer): boolean => given !== undefined && timingSafeEqual(digest(given), expected);
const newSecret = (bytes: number): string => randomBytes(bytes).toString('base64url');

export class UiLogin {
  /** Digests (hex) of the codes not used yet, oldest first. */
  private readonly unused = new Set<string>();
  readonly code = this.newCode();
  /** Signs this start's cookies: none of an earlier start, or of another view, is valid here. */
  private readonly key = randomBytes(32);
  private readonly started: number;
  private readonly cookieName: string;

  constructor(
    private readonly port: number,
    private readonly lifetimeMs = LOGIN_LIFETIME_MS,
    private readonly now: () => number = Date.now,
  ) {
    this.started = now();
    this.cookieName = `${COOKIE_PREFIX}${port}`;
  }

  /** A code that logs one browser in, once. */
  newCode(): string {
    const code = newSecret(18);
    this.unused.add(digest(code).toString('hex'));
    if (this.unused.size > UNUSED_CODES) this.unused.delete(this.unused.values().next().value!);
    return code;
  }

  /** The Set-Cookie header for a valid, unused code (the code then stops working), else undefined. */
  exchange(code: string | null): string | undefined {
    // The lookup is by the code's digest: how long it takes tells nothing about any code.
    if (code === null || !this.unused.delete(digest(code).toString('hex'))) return undefined;
    const expires = this.now() + this.lifetimeMs;
    return `${this.cookieName}=${expires}.${this.signature(expires)}; Max-Age=${Math.floor(this.lifetimeMs / 1000)}; HttpOnly; SameSite=Strict; Path=/`;
  }

  /** The request carries this view's cookie, not expired. */
  authorized(request: IncomingMessage): boolean {
    const [expires, signature] = (cookieValue(request.headers.cookie ?? '', this.cookieName) ?? '').split('.');
    const expiresMs = Number(expires);
    if (!Number.isSafeInteger(expiresMs) || this.now() >= expiresMs) return false;
    return sameSecret(signature, digest(this.signature(expiresMs)));
  }

  private signature(expiresMs: number): string {
    return createHmac('sha256', this.key).update(`${this.port}.${this.started}.${expiresMs}`).digest('base64url');
  }
}

/** A random secret and its digest, for a bearer token. */
export function bearerSecret(): { secret: string; digest: Buffer } {
  const secret = newSecret(24);
  return { secret, digest: digest(secret) };
}

function cookieValue(header: string, name: string): string | undefined {
  for (const part of header.split(';')) {
    const [key, ...value] = part.trim().split('=');
    if (key === name) return value.join('=');
  }
  return undefined;
}
