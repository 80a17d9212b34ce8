import { existsSync } from 'node:fs';
import { join } from 'node:path';

/** Whether the terminal device of a `tty_nr` still exists (pseudo-terminals only; others are assumed present). */
export function ttyExists(ttyNr: number, devRoot = '/dev'): boolean {
  const major = (ttyNr >> 8) & 0xfff;
  const minor = (ttyNr & 0xff) | ((ttyNr >> 12) & 0xfff00);
  if (major < 136 || major > 143) return true; // not a pty
  return existsSync(join(devRoot, 'pts', String((major - 136) * 256 + minor)));
}
