// Which file or directory is at a path while the sidecar runs: its inode and birth time. A filesystem reuses a
// freed inode number at once, so one deleted and created again often has the same inode but not the same birth.
import type { BigIntStats } from 'node:fs';

export function inodeIdentity(info: BigIntStats): string {
  return `${info.ino}:${info.birthtimeNs}`;
}
