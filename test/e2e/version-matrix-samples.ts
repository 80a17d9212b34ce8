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
  permission_denials?: unknown[];
}

export interface MatrixSample {
  version: string;
  scenario: string;
  /** The folder: a Claude config dir (its projects/ holds the transcripts). */
  dir: string;
  sessions: (SessionExpectation & { sessionId: string; conversationRequests?: number })[];
  results: CliResult[];
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
  return { version, scenario, dir, sessions: expectations.sessions, results };
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

/**
 * Whether the CLI's own json usage is the sum of its main loop's responses. Before 1.0.98 it adds
 * message_start and message_delta usage (today's API repeats the input counts in message_delta, so input
 * doubles); 1.0.98 reports the last response only. From 1.0.128 on it is exact.
 */
export function cliUsageIsExact(version: string): boolean {
  return compareVersions(version, '1.0.128') >= 0;
}
