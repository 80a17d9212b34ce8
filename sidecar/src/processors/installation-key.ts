import { randomBytes } from 'node:crypto';
import { chmodSync, linkSync, readFileSync, statSync, unlinkSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { ensurePrivateDir } from '../secure-dir.js';

// The per-installation key of the secret fingerprints (HMAC-SHA256): the same leaked secret gets the
// same fingerprint on this installation, and a fingerprint cannot be checked against a guessed
// secret without the key. Created once, readable only by its owner.

const KEY_BYTES = 32;

export function loadOrCreateInstallationKey(path: string): Buffer {
  ensurePrivateDir(dirname(path), 'state dir');
  try {
    return readKey(path);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
  }
  // Written whole under a temporary name, then linked into place: a concurrent starter either wins
  // the link or reads the complete key of the one that did, never a half-written file.
  const temporary = `${path}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`;
  writeFileSync(temporary, randomBytes(KEY_BYTES), { mode: 0o600 });
  try {
    linkSync(temporary, path);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
  } finally {
    unlinkSync(temporary);
  }
  return readKey(path);
}

function readKey(path: string): Buffer {
  const key = readFileSync(path);
  if (key.length !== KEY_BYTES) {
    throw new Error(`installation key ${path} holds ${key.length} bytes, expected ${KEY_BYTES}: remove it to create a new one (fingerprints will change)`);
  }
  if ((statSync(path).mode & 0o077) !== 0) chmodSync(path, 0o600);
  return key;
}
