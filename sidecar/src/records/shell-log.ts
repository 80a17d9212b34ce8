// What the shell-log source hands on (sources/shell-log-source.ts, docs/HOOKS.md).

/** A line of the shell log (format version 1). */
export interface ShellRecord {
  v: number;
  ev: 'start' | 'end';
  sid: string;
  pid: number;
  seq: number;
  /** Epoch microseconds. */
  ts: number;
  tp?: string;
  ppid?: number | null;
  pgid?: number | null;
  psid?: number | null;
  tty?: string;
  cwd?: string;
  cmd?: string;
  cmdlen?: number;
  status?: number;
}

/** Where the shell-log source hands its records (the shell correlator), and asks how far back a restart must read. */
export interface ShellRecordConsumer {
  add(record: ShellRecord, file: string, offset: number): void;
  /** Offset of the first line of the oldest command of `file` not yet out (undefined: none waiting). */
  oldestWaitingOffset(file: string): number | undefined;
}
