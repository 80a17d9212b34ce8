// The recorded samples of the version matrix: test/fixtures/real/<version>/<scenario>/ for each release the
// harness recorded, and test/fixtures/real/<scenario>/ for the pinned release (the devDependency).
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { compareVersions } from '../harness/claude-releases.js';
import type { SessionExpectation } from '../harness/scenarios.js';

const PINNED_PACKAGE = join(import.meta.dirname, '..', '..', 'node_modules', '@anthropic-ai', 'claude-code-linux-x64', 'package.json');

export interface CliUsage {
  input_tokens: number;
  output_tokens: number;
  cache_read_input_tokens: number;
  cache_creation_input_tokens: number;
}

/** One run's `--output-format json` result (an interrupted 1.0.x run prints none). */
export interface CliResult {
  session_id: string;
  num_turns: number;
  usage: CliUsage;
  permission_denials?: { tool_name: string; tool_use_id: string }[];
}

export interface MatrixSample {
  version: string;
  scenario: string;
  /** The folder: a Claude config dir (its projects/ holds the transcripts). */
  dir: string;
  sessions: (SessionExpectation & { sessionId: string; conversationRequests?: number })[];
  results: CliResult[];
  /** Every run printed its json result (an interrupted run before 2.1.114 prints none). */
  allRunsReported: boolean;
  /**
   * Session ids in transcript rows that no run of the CLI reported: 2.0.42 and 2.0.77 write the warmups of a
   * resumed run under a fresh id of their own (rows of `agent-<id>.jsonl` files only, no prompt).
   */
  unreportedSessions: string[];
  /**
   * Message ids of side requests (no step of the script) that the CLI still wrote into a transcript: the
   * "Warmup" each built-in subagent gets at start in 2.0.x, an `agent-<id>.jsonl` of one assistant row.
   */
  writtenSideMessages: string[];
  /**
   * Output tokens the transcripts hold. Less than the model server answered when a release writes each
   * row with the usage of message_start (output_tokens 1) and never the final one (2.1.17).
   */
  transcriptOutputTokens: number;
  /**
   * The runs were in auto mode (`permissionMode: "auto"` on the prompt rows: print mode's default in some 2.1.2xx
   * releases): the mode, not the script, decided which calls ran; the CLI's permission_denials say which it refused.
   */
  autoMode: boolean;
}

const isVersion = (name: string) => /^\d+\.\d+\.\d+$/.test(name);

function sampleAt(dir: string, version: string, scenario: string): MatrixSample {
  const expectations = JSON.parse(readFileSync(join(dir, 'expectations.json'), 'utf8')) as { sessions: MatrixSample['sessions'] };
  const resultsDir = join(dir, 'results');
  const results = readdirSync(resultsDir)
    .sort()
    .map((file) => readFileSync(join(resultsDir, file), 'utf8'))
    .filter((text) => text.includes('{'))
    // 1.0.x prints a terminal escape before the JSON.
    .map((text) => JSON.parse(text.slice(text.indexOf('{'))) as CliResult);
  const rows = transcriptRows(dir);
  const reported = new Set(expectations.sessions.map((session) => session.sessionId));
  return {
    version,
    scenario,
    dir,
    sessions: expectations.sessions,
    results,
    allRunsReported: results.length === readdirSync(resultsDir).length,
    writtenSideMessages: writtenSideMessages(dir, rows, reported),
    unreportedSessions: [...new Set(rows.map((row) => row.sessionId).filter((id): id is string => !!id && !reported.has(id)))],
    transcriptOutputTokens: transcriptOutputTokens(rows),
    autoMode: rows.some((row) => row.type === 'user' && row.permissionMode === 'auto'),
  };
}

interface RequestSummary {
  handledAs: { kind: string };
  messageId?: string;
}

/** The fields of a transcript row the matrix and its feature detector read. */
export interface TranscriptRow {
  type?: string;
  uuid?: string;
  sessionId?: string;
  agentId?: string;
  isSidechain?: boolean;
  isMeta?: boolean;
  permissionMode?: string;
  turnPosition?: unknown;
  costUSD?: number;
  toolUseResult?: unknown;
  toolDenialKind?: string;
  toolDenialBeforeRun?: boolean;
  permissionDecision?: { decision: string };
  message?: { id?: string; content?: unknown; stop_reason?: string | null; usage?: { output_tokens?: number } };
}

/** Every transcript under the sample's projects/ (path relative to it) with its rows. */
export function transcriptFiles(dir: string): { file: string; rows: TranscriptRow[] }[] {
  const projects = join(dir, 'projects');
  return readdirSync(projects, { recursive: true, encoding: 'utf8' })
    .filter((file) => file.endsWith('.jsonl'))
    .sort()
    .map((file) => ({
      file,
      rows: readFileSync(join(projects, file), 'utf8')
        .split('\n')
        .filter(Boolean)
        .map((line) => JSON.parse(line) as TranscriptRow),
    }));
}

function transcriptRows(dir: string): TranscriptRow[] {
  return transcriptFiles(dir).flatMap((f) => f.rows);
}

/** Side messages written into the transcripts of the CLI's sessions (not those of unreported ids). */
function writtenSideMessages(dir: string, rows: TranscriptRow[], sessions: Set<string>): string[] {
  const requests = JSON.parse(readFileSync(join(dir, 'model-requests.json'), 'utf8')) as RequestSummary[][];
  const side = new Set(requests.flat().filter((r) => r.handledAs.kind === 'side' && r.messageId).map((r) => r.messageId!));
  const written = rows.filter((row) => sessions.has(row.sessionId ?? '') && side.has(row.message?.id ?? ''));
  return [...new Set(written.map((row) => row.message!.id!))];
}

/** Output tokens as the transcripts hold them: the largest count among the rows of each message. */
function transcriptOutputTokens(rows: TranscriptRow[]): number {
  const byMessage = new Map<string, number>();
  for (const row of rows) {
    const id = row.message?.id;
    if (row.type !== 'assistant' || !id) continue;
    byMessage.set(id, Math.max(byMessage.get(id) ?? 0, row.message?.usage?.output_tokens ?? 0));
  }
  return [...byMessage.values()].reduce((total, n) => total + n, 0);
}

function samplesIn(dir: string, version: string): MatrixSample[] {
  return readdirSync(dir)
    .filter((name) => existsSync(join(dir, name, 'expectations.json')))
    .sort()
    .map((scenario) => sampleAt(join(dir, scenario), version, scenario));
}

export function matrixSamples(fixtures: string): MatrixSample[] {
  const pinned = (JSON.parse(readFileSync(PINNED_PACKAGE, 'utf8')) as { version: string }).version;
  const releases = readdirSync(fixtures).filter(isVersion).sort(compareVersions);
  return [...releases.flatMap((version) => samplesIn(join(fixtures, version), version)), ...samplesIn(fixtures, pinned)];
}

type ToolCallExpectation = MatrixSample['sessions'][number]['toolCalls'][number];

/**
 * The calls of the script as auto mode decided them: a main-loop call the CLI lists in its permission_denials
 * was refused, one the script expected refused ran (auto mode allowed it); others are as scripted.
 */
export function asAutoModeDecided(calls: ToolCallExpectation[], results: CliResult[]): ToolCallExpectation[] {
  const refused = results.flatMap((r) => r.permission_denials ?? []).map((d) => d.tool_name);
  return calls.map((call) => {
    const at = call.subagent ? -1 : refused.indexOf(call.tool);
    if (at >= 0) refused.splice(at, 1);
    return at >= 0 ? { ...call, outcome: 'denied' } : call.outcome === 'denied' ? { ...call, outcome: 'success' } : call;
  });
}

/**
 * Whether the CLI's own json usage is the sum of its main loop's responses. Before 1.0.98 it adds
 * message_start and message_delta usage (today's API repeats the input counts in message_delta, so input
 * doubles); 1.0.98 reports the last response only. From 1.0.128 on it is exact.
 */
export function cliUsageIsExact(version: string): boolean {
  return compareVersions(version, '1.0.128') >= 0;
}
