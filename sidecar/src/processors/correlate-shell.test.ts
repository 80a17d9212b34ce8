// Shell spans from a real shell log: commands run by real bash the way Claude Code's Bash tool runs them, with the
// ccotel shell integration on; a transcript whose Bash calls were open at those times.
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runLikeBashTool, SHELL_SCRIPT } from '../../../test/hook/run.js';
import type { ShellCommandEnded, ToolCallEnded } from '../events.js';
import { Pipeline } from '../pipeline.js';
import { ShellLogSource } from '../sources/shell-log-source.js';
import type { ShellRecord } from '../records/shell-log.js';
import { BASH_SPANS_REMEMBERED, ShellCorrelator } from './correlate-shell.js';
import { programOf } from './encode/shell.js';
import { toolSpanId } from '../semconv.js';
import { TranscriptCorrelator } from './transcripts/correlator.js';
import { parseTranscriptLine } from './parse-transcript.js';
import { MemorySink } from '../../../test/helpers/memory-sink.js';

const SESSION = 'bbbbbbbb-0000-4000-8000-000000000002';

/** The commands the shell join told of so far. */
const commandsOf = (shell: ShellCorrelator): ShellCommandEnded[] => shell.drain().events.filter((event): event is ShellCommandEnded => event.kind === 'ShellCommandEnded');

function runCommands(commands: string[]) {
  const dir = mkdtempSync(join(tmpdir(), 'ccotel-shell-'));
  const logDir = join(dir, 'shell');
  const runs = commands.map((command) => {
    const before = Date.now();
    const run = runLikeBashTool(command, {
      envFileLine: `__ccotel_shell_log_dir='${logDir}'; . '${SHELL_SCRIPT}'`,
      env: { CLAUDE_CODE_SESSION_ID: SESSION },
      cwdFile: join(dir, 'cwd'),
    });
    return { command, before, after: Date.now(), status: run.status };
  });
  return { logDir, runs };
}

/** A one-turn transcript with a Bash call open around each run (tool_use just before, result just after). */
function transcript(runs: { command: string; before: number; after: number; status: number | null }[]): string[] {
  const at = (ms: number) => new Date(ms).toISOString();
  const base = (uuid: string, ms: number) => ({ uuid, parentUuid: null, sessionId: SESSION, timestamp: at(ms), isSidechain: false });
  const rows: object[] = [{ ...base('p1', runs[0].before - 100), type: 'user', promptId: 'prompt-1', message: { role: 'user', content: 'run them' } }];
  runs.forEach((run, i) => {
    rows.push({
      ...base(`a${i}`, run.before - 5),
      type: 'assistant',
      requestId: `req_${i}`,
      message: { id: `msg_${i}`, model: 'claude-test', role: 'assistant', content: [{ type: 'tool_use', id: `toolu_${i}`, name: 'Bash', input: { command: run.command } }], usage: { input_tokens: 1, output_tokens: 1 } },
    });
    rows.push({
      ...base(`r${i}`, run.after + 5),
      type: 'user',
      message: { role: 'user', content: [{ type: 'tool_result', tool_use_id: `toolu_${i}`, content: 'out', is_error: run.status !== 0 }] },
    });
  });
  return rows.map((row) => JSON.stringify(row));
}

async function correlate(logDir: string, lines: string[]) {
  const sink = new MemorySink();
  const shell = new ShellCorrelator();
  const transcripts = new TranscriptCorrelator();
  const pipeline = new Pipeline(transcripts, [], [sink], [shell]);
  const source = new ShellLogSource({ dir: logDir, emit: (read, ack) => shell.addRecords(read, ack), skipRecord: (record) => pipeline.skipRecord(record) });
  await source.readAll();
  lines.forEach((line, index) => {
    const parsed = parseTranscriptLine(line);
    if (parsed.ok === true) transcripts.add(parsed.entry, { path: '/t.jsonl', kind: 'main' }, index);
  });
  await pipeline.finish();
  return { received: sink.received, shell, source };
}

describe('ShellCorrelator', () => {
  it('makes a shell span per command under the Bash tool span open at that time, and a ccotel.shell.command record', async () => {
    const { logDir, runs } = runCommands(['echo hello | tr a-z A-Z', 'ls /nonexistent-dir-ccotel', 'FOO=1 /bin/true && sleep 0.01']);
    expect(runs.map((run) => run.status)).toEqual([0, 2, 0]);
    const { received, shell } = await correlate(logDir, transcript(runs));
    const tools = received.spans.filter((span) => span.name === 'execute_tool Bash').sort((a, b) => a.startMs - b.startMs);
    const shells = received.spans.filter((span) => span.name.startsWith('shell ')).sort((a, b) => a.startMs - b.startMs);
    expect(shells.map((span) => span.name)).toEqual(['shell echo', 'shell ls', 'shell true']);
    shells.forEach((span, i) => {
      expect(span.parentSpanId).toBe(tools[i].spanId);
      expect(span.traceId).toBe(tools[i].traceId);
      expect(span.attributes['process.command_line']).toBe(runs[i].command);
      expect(span.attributes['process.exit.code']).toBe(runs[i].status);
      expect(span.attributes.tool_use_id).toBe(`toolu_${i}`);
      expect(span.attributes['process.pid']).toBeTypeOf('number');
      expect(span.attributes['process.session_leader.pid']).toBeTypeOf('number');
      expect(span.attributes['process.parent_pid']).toBe(process.pid); // spawned by this test, as by Claude Code
    });
    expect(shells[1].status).toBe('error');
    const logs = received.logs.filter((log) => log.eventName === 'ccotel.shell.command');
    expect(logs).toHaveLength(3);
    expect(logs[1]).toMatchObject({ traceId: tools[1].traceId, spanId: shells[1].spanId });
    expect(logs[1].attributes).toMatchObject({ 'process.exit.code': 2, 'process.command_line': 'ls /nonexistent-dir-ccotel', cwd: expect.any(String) });
    expect(shell.stats).toMatchObject({ commands: 3, underToolSpan: 3, withoutToolSpan: 0 });
  });

  it('gives a command with no Bash call a trace of its own; a start without an end ends with its call', async () => {
    const { logDir, runs } = runCommands(['true']);
    // A command killed before its EXIT trap ran: drop its end line.
    const file = join(logDir, `${SESSION}.jsonl`);
    const [startLine] = readFileSync(file, 'utf8').split('\n');
    const killed = { ...JSON.parse(startLine), pid: 999_999, ts: runs[0].before * 1000 + 500, cmd: 'sleep 100' };
    const { appendFileSync } = await import('node:fs');
    appendFileSync(file, `${JSON.stringify(killed)}\nnot json\n`);
    const lines = transcript([{ command: 'sleep 100', before: runs[0].before, after: runs[0].after + 2000, status: 1 }]);
    const { received, shell, source } = await correlate(logDir, lines);
    const [tool] = received.spans.filter((span) => span.name === 'execute_tool Bash');
    const sleep = received.spans.find((span) => span.name === 'shell sleep')!;
    expect(sleep.parentSpanId).toBe(tool.spanId);
    expect(sleep.endMs).toBe(tool.endMs);
    expect(sleep.attributes['ccotel.shell.ended']).toBe(false);
    expect(shell.stats.withoutEnd).toBe(1);
    expect(source.stats.skipped).toBe(1);
    expect(received.logs.find((log) => log.eventName === 'ccotel.record.skipped')?.attributes['ccotel.source']).toBe('shell');
  });

  it('names the program of a command line', () => {
    expect(programOf('A=1 B=2 /usr/bin/env node x.js')).toBe('env');
    expect(programOf('cd /tmp && ls')).toBe('cd');
    expect(programOf('')).toBe('sh');
  });
});

describe('ShellCorrelator with parallel Bash calls', () => {
  const bashCall = (toolUseId: string, startMs: number, endMs: number): ToolCallEnded => ({
    kind: 'ToolCallEnded', traceId: 't'.repeat(32), spanId: toolUseId.padEnd(16, '0').slice(0, 16), sessionId: SESSION, toolUseId, toolName: 'Bash',
    input: { command: 'npm test' }, outcome: 'success', startMs, endMs, endedAtMs: endMs, parentSpanId: 'r'.repeat(16),
  });
  const command = (pid: number, startMs: number, endMs: number): ShellRecord[] => [
    { v: 1, ev: 'start', sid: SESSION, tp: '', pid, ppid: 100, pgid: pid, psid: pid, tty: '', cwd: '/p', cmd: 'npm test', cmdlen: 8, ts: startMs * 1000, seq: 1 },
    { v: 1, ev: 'end', sid: SESSION, pid, seq: 1, ts: endMs * 1000, status: 0, cwd: '/p' },
  ];

  it('remembers the most recent BASH_SPANS_REMEMBERED Bash spans of all sessions for late commands, not every one', () => {
    const shell = new ShellCorrelator();
    // Span ids of their own (bashCall's are cut from the call id).
    const inSession = (call: ToolCallEnded, sessionId: string, n: number): ToolCallEnded => ({ ...call, spanId: n.toString(16).padStart(16, '0'), sessionId });
    shell.observe([bashCall('toolu_oldest', 1_000, 5_000)]);
    for (let n = 0; n < BASH_SPANS_REMEMBERED; n++) {
      shell.observe([inSession(bashCall(`toolu_${n}`, 10_000 + n * 10, 10_005 + n * 10), `other-${n % 1000}`, n)]);
    }
    shell.observe([bashCall('toolu_latest', 1_000_000, 1_005_000)]);
    [...command(11, 1_001, 4_990), ...command(22, 1_000_001, 1_004_990)].forEach((record, offset) => shell.add(record, '/s.jsonl', offset));
    shell.finish();
    const parents = Object.fromEntries(commandsOf(shell).map((ended) => [ended.pid, ended.toolUseId ?? 'none']));
    expect(parents).toEqual({ 11: 'none', 22: 'toolu_latest' });
  });

  it('reading once (every record read before the transcripts), keeps no span that no command waits for', () => {
    const parentsOf = (lateRecords: boolean, recordsFirst: boolean) => {
      const shell = new ShellCorrelator({ lateRecords });
      const records = () => command(11, 1_001, 4_990).forEach((record, offset) => shell.add(record, '/s.jsonl', offset));
      if (recordsFirst) records();
      shell.observe([bashCall('toolu_one', 1_000, 5_000)]);
      if (!recordsFirst) records();
      shell.finish();
      return commandsOf(shell).map((ended) => ended.toolUseId ?? 'none');
    };
    expect(parentsOf(false, true)).toEqual(['toolu_one']);
    // A record after its span finds it only where late records are expected: reading once, the span was not kept.
    expect(parentsOf(true, false)).toEqual(['toolu_one']);
    expect(parentsOf(false, false)).toEqual(['none']);
  });

  it('puts each of two identical commands under its own call, whichever call is out first', () => {
    const shell = new ShellCorrelator();
    // Two calls of one response: the first runs 1 s – 5 s, the second 3 s – 5.5 s, both `npm test`.
    [...command(11, 1_001, 4_990), ...command(22, 3_001, 5_400)].forEach((record, offset) => shell.add(record, '/s.jsonl', offset));
    shell.observe([bashCall('toolu_first', 1_000, 5_000)]); // its result came first
    shell.observe([bashCall('toolu_second', 3_000, 5_500)]);
    shell.finish();
    expect(Object.fromEntries(commandsOf(shell).map((ended) => [ended.pid, ended.toolUseId]))).toEqual({ 11: 'toolu_first', 22: 'toolu_second' });
  });
  it('puts a command whose shell names its call (Codex 0.171: CODEX_TOOL_CALL_ID) under that call, whatever the times say', () => {
    const shell = new ShellCorrelator();
    // A source's own shell tool (shellCommand set), its span by its call id as every source's execute_tool span is.
    const codexCall = (callId: string, startMs: number, endMs: number): ToolCallEnded => ({ ...bashCall(callId, startMs, endMs), toolName: 'exec_command', input: { cmd: 'npm test' }, shellCommand: 'npm test', spanId: toolSpanId(callId) });
    const named = command(11, 1_001, 4_990).map((record) => (record.ev === 'start' ? { ...record, call: 'call_later' } : record));
    named.forEach((record, offset) => shell.add(record, '/s.jsonl', offset));
    shell.observe([codexCall('call_during', 1_000, 5_000), codexCall('call_later', 6_000, 9_000)]);
    shell.finish();
    expect(commandsOf(shell).map((ended) => ended.toolUseId)).toEqual(['call_later']);
  });
});
