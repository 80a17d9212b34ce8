// What the shell-log source hands on (sources/shell-log-source.ts, docs/HOOKS.md).
import type { ResumeAck } from '../model.js';

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
  /** The tool call that ran the shell, where the agent names it (Codex 0.171's CODEX_TOOL_CALL_ID), else "". */
  call?: string;
  ppid?: number | null;
  pgid?: number | null;
  psid?: number | null;
  tty?: string;
  cwd?: string;
  cmd?: string;
  cmdlen?: number;
  status?: number;
}

/** Records the shell-log source read from one file, in file order, through `end` (the offset after the last line read). */
export interface ShellRead {
  file: string;
  records: { record: ShellRecord; offset: number }[];
  end: number;
}

/** Where the shell-log source hands its records (the shell correlator), with the ack that learns where a restart must read. */
export interface ShellRecordConsumer {
  addRecords(read: ShellRead, ack: ResumeAck): void;
}
