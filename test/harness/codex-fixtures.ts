// The recorded Codex fixtures (record-codex.ts) as tests read them: each release's rollouts, what its CLI printed
// and what the scripted server answered — three accounts of the same runs, each written by another party.
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { ResponsesStep } from './responses-server.js';

export const CODEX_FIXTURES = resolve(import.meta.dirname, '../fixtures/codex');

export interface CodexFixture {
  version: string;
  /** A CODEX_HOME: `sessions/` holds the rollouts. */
  home: string;
  rollouts: string[];
  /** The thread of each run, in run order (a resume names the thread it continues). */
  threads: string[];
  /** The steps of each run, as the server answered them (a resume or a fork names the run whose thread it takes). */
  runs: { prompt: string; resumes?: number; forks?: number; interruptAfterMs?: number; steps: ResponsesStep[] }[];
  /** Per run, the events `codex exec --json` printed. */
  printed: Record<string, unknown>[][];
}

function filesUnder(dir: string): string[] {
  return readdirSync(dir)
    .sort()
    .flatMap((name) => {
      const path = join(dir, name);
      return statSync(path).isDirectory() ? filesUnder(path) : [path];
    });
}

/** One fixture folder (record-codex.ts writes them). */
export function codexFixture(home: string, version: string): CodexFixture {
  const server = JSON.parse(readFileSync(join(home, 'server.json'), 'utf8')) as { threads: string[]; scenario: CodexFixture['runs'] };
  const printed = server.scenario.map((_, n) =>
    readFileSync(join(home, `exec-${n}.jsonl`), 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((line) => JSON.parse(line) as Record<string, unknown>),
  );
  return { version, home, rollouts: filesUnder(join(home, 'sessions')), threads: server.threads, runs: server.scenario, printed };
}

export function codexFixtures(): CodexFixture[] {
  return readdirSync(CODEX_FIXTURES)
    .filter((name) => statSync(join(CODEX_FIXTURES, name)).isDirectory())
    .map((version) => codexFixture(join(CODEX_FIXTURES, version), version));
}

/** A recorded TUI session (codex-tui.ts): the rollouts and what the server, the hooks, the OTel export and the screen saw. */
export interface CodexTuiFixture {
  version: string;
  /** Its folder: `sessions/` holds the rollouts (a CODEX_HOME, as the exec fixtures' folders are). */
  home: string;
  rollouts: string[];
  /** The prompts typed and the server's answers to each. */
  scenario: { prompt: string; steps: ResponsesStep[] }[];
  /** The server's answers in order: the response id and the call ids it gave. */
  answered: { step: number; responseId: string; callIds: string[] }[];
  /** Every hook payload with the time it fired (ns since the epoch), in firing order. */
  hooks: { firedAtNs: string; payload: Record<string, unknown> }[];
  /** Codex's OTel log exports (OTLP/JSON bodies), in order. */
  otelLogs: unknown[];
  screens: string;
}

const jsonLines = (path: string) => readFileSync(path, 'utf8').split('\n').filter(Boolean).map((line) => JSON.parse(line) as Record<string, unknown>);

/** One TUI session's folder (codex-tui.ts writes them). */
export function codexTuiFixture(dir: string): CodexTuiFixture {
  const server = JSON.parse(readFileSync(join(dir, 'server.json'), 'utf8')) as Pick<CodexTuiFixture, 'version' | 'scenario' | 'answered'>;
  return {
    version: server.version,
    home: dir,
    rollouts: filesUnder(join(dir, 'sessions')),
    scenario: server.scenario,
    answered: server.answered,
    hooks: jsonLines(join(dir, 'hooks.jsonl')) as CodexTuiFixture['hooks'],
    otelLogs: jsonLines(join(dir, 'otel-logs.jsonl')),
    screens: readFileSync(join(dir, 'screens.txt'), 'utf8'),
  };
}

/** The committed TUI sessions: each release's `tui/`. */
export function codexTuiFixtures(): CodexTuiFixture[] {
  return readdirSync(CODEX_FIXTURES)
    .filter((name) => existsSync(join(CODEX_FIXTURES, name, 'tui', 'server.json')))
    .map((name) => codexTuiFixture(join(CODEX_FIXTURES, name, 'tui')));
}
