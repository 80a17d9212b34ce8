// Open input files (transcripts, shell logs, spool files) so that nothing on the path can block or mislead
// the sidecar: without following a symlink in the last component (a link out of a root would make it read
// any file the user can), non-blocking (opening a FIFO would otherwise wait for a writer, holding a thread
// of the pool or, for a synchronous read, the whole event loop), and only when it is a regular file.
import { closeSync, constants, fstatSync, openSync, readFileSync } from 'node:fs';
import { open, type FileHandle } from 'node:fs/promises';

const READ_FLAGS = constants.O_RDONLY | constants.O_NONBLOCK | constants.O_NOFOLLOW;

/** A path that is not read on purpose: a symlink, a FIFO, a device, a directory (callers name the path). */
export class NotRegularFileError extends Error {
  constructor(readonly code: 'ELOOP' | 'ENOTREG') {
    super(code === 'ELOOP' ? 'a symlink (not followed)' : 'not a regular file');
  }
}

function refuseSymlink(error: unknown): never {
  if ((error as NodeJS.ErrnoException).code === 'ELOOP') throw new NotRegularFileError('ELOOP');
  throw error;
}

/** Opened and checked: a regular file, not reached through a final symlink. The caller closes it. */
export async function openRegularFile(path: string): Promise<FileHandle> {
  return (await openRegularFileSized(path)).handle;
}

/** An opened regular file and the size its check saw. */
export interface SizedFile {
  handle: FileHandle;
  size: number;
}

/** `openRegularFile`, with the size the check saw. */
export async function openRegularFileSized(path: string): Promise<SizedFile> {
  const handle = await open(path, READ_FLAGS).catch((error: unknown) => refuseSymlink(error));
  const info = await handle.stat();
  if (info.isFile()) return { handle, size: info.size };
  await handle.close();
  throw new NotRegularFileError('ENOTREG');
}

/** A regular file larger than the reader takes (callers name the path). */
export class FileTooLargeError extends Error {
  constructor(size: number, maxBytes: number) {
    super(`${size} bytes, more than the ${maxBytes} read`);
  }
}

export interface ReadOptions {
  /**
   * Follow a final symlink (settings files are often links into a dotfiles repository, and Claude Code follows
   * them): the target must still be a regular file.
   */
  followSymlink?: boolean;
  maxBytes?: number;
}

/** The whole text of a regular file, read synchronously only once it is known not to block. */
export function readRegularFileSync(path: string, { followSymlink = false, maxBytes }: ReadOptions = {}): string {
  let fd: number;
  try {
    fd = openSync(path, followSymlink ? READ_FLAGS & ~constants.O_NOFOLLOW : READ_FLAGS);
  } catch (error) {
    refuseSymlink(error);
  }
  try {
    const info = fstatSync(fd);
    if (!info.isFile()) throw new NotRegularFileError('ENOTREG');
    if (maxBytes !== undefined && info.size > maxBytes) throw new FileTooLargeError(info.size, maxBytes);
    return readFileSync(fd, 'utf8');
  } finally {
    closeSync(fd);
  }
}
