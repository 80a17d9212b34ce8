// Login for the web view: the printed URL carries a one-time code, exchanged for a session cookie (HttpOnly,
// SameSite=Strict), so the secret that keeps working is never in the browser's history or a shell's scrollback.
// More codes are minted on request (`ccotel ui --login-url`, authorized by a secret only the state directory's
// owner can read: ui/login-record.ts), each working once.
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage } from 'node:http';

export const COOKIE_NAME = 'ccotel_ui';
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
  private readonly sessionToken = newSecret(24);
  private readonly sessionDigest = digest(this.sessionToken);

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
    return `${COOKIE_NAME}=${this.sessionToken}; HttpOnly; SameSite=Strict; Path=/`;
  }

  authorized(request: IncomingMessage): boolean {
    return sameSecret(cookieValue(request.headers.cookie ?? '', COOKIE_NAME), this.sessionDigest);
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
