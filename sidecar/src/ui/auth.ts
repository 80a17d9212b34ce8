// Login for the web view: the printed URL carries a one-time code, exchanged for a session cookie (HttpOnly,
// SameSite=Strict), so the secret that keeps working is never in the browser's history or a shell's scrollback.
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage } from 'node:http';

export const COOKIE_NAME = 'ccotel_ui';

/** Fixed-length digests, so a comparison takes the same time whatever the guess. */
const digest = (secret: string): Buffer => createHash('sha256').update(secret).digest();
const sameSecret = (given: string | undefined, expected: Buffer): boolean => given !== undefined && timingSafeEqual(digest(given), expected);

export class UiLogin {
  readonly code = randomBytes(18).toString('base64url');
  private readonly codeDigest = digest(this.code);
  private readonly sessionToken = randomBytes(24).toString('base64url');
  private readonly sessionDigest = digest(this.sessionToken);
  private codeUsed = false;

  /** The Set-Cookie header for a valid, unused code (the code then stops working), else undefined. */
  exchange(code: string | null): string | undefined {
    if (this.codeUsed || !sameSecret(code ?? undefined, this.codeDigest)) return undefined;
    this.codeUsed = true;
    return `${COOKIE_NAME}=${this.sessionToken}; HttpOnly; SameSite=Strict; Path=/`;
  }

  authorized(request: IncomingMessage): boolean {
    return sameSecret(cookieValue(request.headers.cookie ?? '', COOKIE_NAME), this.sessionDigest);
  }
}

function cookieValue(header: string, name: string): string | undefined {
  for (const part of header.split(';')) {
    const [key, ...value] = part.trim().split('=');
    if (key === name) return value.join('=');
  }
  return undefined;
}
