// No descriptor left (EMFILE for the process, ENFILE for the system, e.g. a local user holding sockets open):
// nothing is wrong with the file, so a source tries again on a timer instead of waiting for the next change,
// and says so in `ccotel status` meanwhile.

/** How soon a source tries again after running out of descriptors. */
export const OUT_OF_DESCRIPTORS_RETRY_MS = 1_000;

export function isOutOfDescriptors(error: unknown): error is NodeJS.ErrnoException {
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  return code === 'EMFILE' || code === 'ENFILE';
}

/** What a source shows in the status while it retries: the error code and since when. */
export class DescriptorRetry {
  private sinceMs?: number;
  private code?: string;

  constructor(
    private readonly source: string,
    private readonly log?: (message: string) => void,
  ) {}

  /** A read ran out of descriptors: logged once per episode. */
  failed(error: NodeJS.ErrnoException): void {
    if (this.sinceMs === undefined) this.log?.(`${this.source}: out of file descriptors (${error.code}); retrying every ${OUT_OF_DESCRIPTORS_RETRY_MS / 1000} s`);
    this.sinceMs ??= Date.now();
    this.code = error.code;
  }

  /** A pass that met no such error. */
  recovered(): void {
    if (this.sinceMs !== undefined) this.log?.(`${this.source}: file descriptors available again`);
    this.sinceMs = undefined;
  }

  get retrying(): boolean {
    return this.sinceMs !== undefined;
  }

  /** For the status: `retrying after EMFILE since <time>`, or undefined. */
  get state(): string | undefined {
    return this.sinceMs === undefined ? undefined : `retrying after ${this.code} since ${new Date(this.sinceMs).toISOString()}`;
  }
}
