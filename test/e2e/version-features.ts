// Which variant of each transcript-format feature a recorded Claude Code release shows, read from its samples
// (test/fixtures/real/<version>/<scenario>/). docs/VERSIONS.md's per-feature table is generated from this
// (test/harness/print-version-features.ts) and version-features.test.ts checks that every change of variant
// lies between two recorded releases that are neighbours in the list of published ones.
import { existsSync, readFileSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { matrixSamples, transcriptFiles, type TranscriptRow } from './version-matrix-samples.js';

interface RequestSummary {
  handledAs: { kind: string };
  tools?: string[];
  prompt?: string;
  messageId?: string;
}

/** What a feature's detector reads of one sample folder. */
interface SampleView {
  dir: string;
  /** Transcript rows with the file each is in (relative to projects/). */
  files: { file: string; rows: TranscriptRow[] }[];
  requests: RequestSummary[];
  sessionIds: string[];
}

interface Feature {
  name: string;
  /** The scenarios it is read from; a release without all of them has no variant for it. */
  scenarios: string[];
  detect: (samples: Record<string, SampleView>) => string;
}

const rowsOf = (view: SampleView) => view.files.flatMap((f) => f.rows);
const keys = (value: object) => Object.keys(value).sort().join(', ');
const textOf = (content: unknown): string =>
  typeof content === 'string'
    ? content
    : Array.isArray(content)
      ? content.map((block: { text?: string; content?: unknown }) => block.text ?? textOf(block.content)).join('')
      : '';

/** The message ids the model server answered as side requests whose prompt is `Warmup`. */
function warmupMessages(view: SampleView): Set<string> {
  return new Set(view.requests.filter((r) => r.handledAs.kind === 'side' && r.prompt === 'Warmup' && r.messageId).map((r) => r.messageId!));
}

/** Where a transcript file is: the session's own file, a legacy `agent-<id>.jsonl` beside it, or `<session>/subagents/`. */
function placeOf(file: string): string {
  if (basename(dirname(file)) === 'subagents') return '<session>/subagents/agent-<id>.jsonl';
  return basename(file).startsWith('agent-') ? 'agent-<id>.jsonl beside the session file' : 'the session file';
}

/** Tool results of user rows, with the row that holds each. */
function toolResults(view: SampleView) {
  return rowsOf(view).flatMap((row) =>
    Array.isArray(row.message?.content)
      ? (row.message.content as { type?: string; content?: unknown }[]).filter((b) => b.type === 'tool_result').map((block) => ({ row, text: textOf(block.content) }))
      : [],
  );
}

/** The first sentence of a denial, with the run's paths written `<path>`. */
function denialWording(text: string): string {
  const sentence = text.split(/(?<=\.)\s|\n/)[0];
  return sentence.replace(/\/tmp\/ccotel-harness\/[^\s'",]*/g, '<path>');
}

/** How the rows of one assistant message (one per content block) carry its usage. */
function usageFinality(rows: TranscriptRow[]): string {
  const byMessage = new Map<string, TranscriptRow[]>();
  for (const row of rows) if (row.type === 'assistant' && row.message?.id) byMessage.set(row.message.id, [...(byMessage.get(row.message.id) ?? []), row]);
  const shapes = new Set(
    [...byMessage.values()]
      .filter((message) => message.length > 1)
      .map((message) => {
        const outputs = new Set(message.map((row) => row.message?.usage?.output_tokens));
        if (outputs.size > 1) return "message_start's usage on the first rows, the final on the last";
        if (message.at(-1)!.message?.stop_reason == null) return "message_start's usage on every row (output_tokens 1, no stop_reason)";
        return 'the final usage on every row';
      }),
  );
  return [...shapes].sort().join('; ') || 'one row per message (its final usage)';
}

function resumeStyle(view: SampleView): string {
  if (view.sessionIds.length > 1) {
    const [first, second] = view.sessionIds.map((id) => view.files.find((f) => basename(f.file) === `${id}.jsonl`)?.rows ?? []);
    const uuids = new Set(first.map((row) => row.uuid));
    const copiesUuids = second.some((row) => row.type === 'user' && uuids.has(row.uuid));
    return `new session id and file, the old turns copied (${copiesUuids ? 'same' : 'new'} uuids)`;
  }
  const own = view.files.find((f) => basename(f.file) === `${view.sessionIds[0]}.jsonl`)?.rows ?? [];
  const marks = [
    view.files.some((f) => f.rows.length > 0 && f.rows.every((row) => row.type === 'summary')) && 'a summary-only file',
    own.some((row) => row.type === 'queue-operation') && 'queue-operation rows',
    own.some((row) => row.turnPosition) && 'turnPosition on prompts',
  ].filter(Boolean);
  return `same id, its file appended${marks.length ? '; ' + marks.join(', ') : ', nothing marks the resume'}`;
}

function subagentLayout(view: SampleView): string {
  const warmups = warmupMessages(view);
  const subagentFiles = view.files.filter((f) => f.rows.some((row) => row.isSidechain && row.type === 'assistant' && !warmups.has(row.message?.id ?? '')));
  const places = [...new Set(subagentFiles.map((f) => placeOf(f.file)))].sort();
  const withId = subagentFiles.some((f) => f.rows.some((row) => row.isSidechain && row.agentId));
  const meta = subagentFiles.some((f) => existsSync(join(view.dir, 'projects', f.file.replace(/\.jsonl$/, '.meta.json'))));
  return `${places.join(' + ') || 'none'}${withId ? ', agentId' : ''}${meta ? ', .meta.json' : ''}`;
}

function warmupRows(view: SampleView): string {
  const warmups = warmupMessages(view);
  if (warmups.size === 0) return 'none requested';
  const files = view.files.filter((f) => f.rows.some((row) => warmups.has(row.message?.id ?? '')));
  if (files.length === 0) return 'requested, not written';
  const prompt = files.some((f) => f.rows.some((row) => row.type === 'user' && textOf(row.message?.content) === 'Warmup'));
  const places = [...new Set(files.map((f) => placeOf(f.file)))].sort().join(' + ');
  return `${places}: ${prompt ? 'the Warmup prompt and the answer' : 'the answer only'}`;
}

function commandRows(view: SampleView): string {
  const userRows = rowsOf(view).filter((row) => row.type === 'user' && !row.isSidechain && !Array.isArray(row.message?.content) || row.isMeta);
  const shown = userRows.map((row) => (row.isMeta ? '+ an isMeta row with the expansion' : JSON.stringify(textOf(row.message?.content))));
  return shown.join(' ');
}

function costRows(view: SampleView): string {
  const rows = rowsOf(view);
  const kinds = [rows.some((row) => row.costUSD !== undefined) && 'costUSD on assistant rows', rows.some((row) => row.type === 'cost-state') && 'a cost-state row'];
  return kinds.filter(Boolean).join(' + ') || 'none';
}

function permissionDecisions(views: SampleView[]): string {
  const results = views.flatMap(toolResults);
  const shapes = new Set(results.filter(({ row }) => row.permissionDecision).map(({ row }) => `${row.permissionDecision!.decision} {${keys(row.permissionDecision!)}}`));
  if (results.some(({ row }) => row.toolDenialBeforeRun !== undefined)) shapes.add('toolDenialBeforeRun');
  return [...shapes].sort().join('; ') || 'none';
}

export const FEATURES: Feature[] = [
  { name: 'resume style', scenarios: ['resume'], detect: ({ resume }) => resumeStyle(resume) },
  {
    name: 'subagent tool',
    scenarios: ['bash-success'],
    detect: ({ 'bash-success': view }) => ['Task', 'Agent'].filter((tool) => view.requests.some((r) => r.handledAs.kind === 'step' && r.tools?.includes(tool))).join(' + ') || 'none',
  },
  { name: 'subagent layout', scenarios: ['subagent'], detect: ({ subagent }) => subagentLayout(subagent) },
  { name: 'Warmup rows', scenarios: ['bash-success'], detect: ({ 'bash-success': view }) => warmupRows(view) },
  {
    name: 'denial markers',
    scenarios: ['permission-denied'],
    detect: ({ 'permission-denied': view }) =>
      [...new Set(toolResults(view).filter(({ row }) => row.toolUseResult !== undefined && /^Error: /.test(String(row.toolUseResult))).map(({ text }) => denialWording(text)))].join(' / ') || 'none',
  },
  {
    name: 'toolDenialKind values',
    scenarios: ['bash-success', 'permission-denied'],
    detect: (views) =>
      [...new Set([views['bash-success'], views['permission-denied']].flatMap(toolResults).map(({ row }) => row.toolDenialKind).filter(Boolean))].sort().join(', ') || 'none',
  },
  {
    name: 'permission decision fields',
    scenarios: ['bash-success', 'permission-denied'],
    detect: (views) => permissionDecisions([views['bash-success'], views['permission-denied']]),
  },
  {
    name: "print mode's permission mode",
    scenarios: ['bash-success'],
    detect: ({ 'bash-success': view }) => {
      const modes = new Set(rowsOf(view).filter((row) => row.type === 'user' && row.permissionMode).map((row) => row.permissionMode));
      return modes.size ? `${[...modes].join(', ')} (on prompt rows)` : 'not written';
    },
  },
  { name: 'usage finality', scenarios: ['bash-success'], detect: ({ 'bash-success': view }) => usageFinality(rowsOf(view)) },
  { name: 'command rows', scenarios: ['slash-command'], detect: ({ 'slash-command': view }) => commandRows(view) },
  { name: 'cost rows', scenarios: ['bash-success'], detect: ({ 'bash-success': view }) => costRows(view) },
];

function viewOf(dir: string): SampleView {
  const expectations = JSON.parse(readFileSync(join(dir, 'expectations.json'), 'utf8')) as { sessions: { sessionId: string }[] };
  return {
    dir,
    files: transcriptFiles(dir),
    requests: (JSON.parse(readFileSync(join(dir, 'model-requests.json'), 'utf8')) as RequestSummary[][]).flat(),
    sessionIds: expectations.sessions.map((session) => session.sessionId),
  };
}

/** One recorded release: the variant of each feature whose scenarios it has (undefined for the others). */
export interface ReleaseFeatures {
  version: string;
  variants: Record<string, string | undefined>;
}

/** The features of a release from its samples (scenario name → folder). */
export function releaseFeatures(version: string, sampleDirs: Record<string, string>): ReleaseFeatures {
  const views: Record<string, SampleView> = {};
  const view = (scenario: string) => (views[scenario] ??= viewOf(sampleDirs[scenario]));
  const variants = Object.fromEntries(
    FEATURES.map((feature) => [
      feature.name,
      feature.scenarios.every((s) => s in sampleDirs) ? feature.detect(Object.fromEntries(feature.scenarios.map((s) => [s, view(s)]))) : undefined,
    ]),
  );
  return { version, variants };
}

/** Every recorded release's features, oldest first (the pinned release's samples are in two places, as in matrixSamples). */
export function recordedFeatures(fixtures: string): ReleaseFeatures[] {
  const byVersion = new Map<string, Record<string, string>>();
  for (const sample of matrixSamples(fixtures)) byVersion.set(sample.version, { ...byVersion.get(sample.version), [sample.scenario]: sample.dir });
  return [...byVersion].map(([version, dirs]) => releaseFeatures(version, dirs));
}

export const TABLE_START = '<!-- feature table: generated by test/harness/bisect-releases.ts --write -->';
export const TABLE_END = '<!-- end of feature table -->';

/** The published releases from 1.0.0 on, oldest first, as fetched last (test/harness/bisect-releases.ts --releases). */
export function publishedReleases(fixtures: string): string[] {
  return JSON.parse(readFileSync(join(fixtures, 'releases.json'), 'utf8')) as string[];
}

/** A change of a feature's variant between two recorded releases. */
export interface FeatureChange {
  feature: string;
  before: string;
  after: string;
  from: string;
  to: string;
  /** Published releases strictly between the two, none recorded for this feature. */
  unrecorded: string[];
}

/** Every change of variant between consecutive releases recorded for a feature. */
export function featureChanges(recorded: ReleaseFeatures[], published: string[]): FeatureChange[] {
  return FEATURES.flatMap((feature) => {
    const known = recorded.filter((release) => release.variants[feature.name] !== undefined);
    return known.slice(1).flatMap((release, i) => {
      const previous = known[i];
      const [before, after] = [previous.variants[feature.name]!, release.variants[feature.name]!];
      if (before === after) return [];
      const unrecorded = published.slice(published.indexOf(previous.version) + 1, published.indexOf(release.version));
      return [{ feature: feature.name, before, after, from: previous.version, to: release.version, unrecorded }];
    });
  });
}

/** docs/VERSIONS.md's per-feature table: each variant with the recorded releases that show it. */
export function featureTable(recorded: ReleaseFeatures[]): string {
  const lines = ['| feature | variant | first release | last release |', '|---|---|---|---|'];
  for (const feature of FEATURES) {
    const known = recorded.filter((release) => release.variants[feature.name] !== undefined);
    known.forEach((release, i) => {
      const variant = release.variants[feature.name]!;
      if (known[i - 1]?.variants[feature.name] === variant) return;
      let last = i;
      while (known[last + 1]?.variants[feature.name] === variant) last++;
      lines.push(`| ${feature.name} | \`${variant.replaceAll('|', '\\|')}\` | ${release.version} | ${known[last].version} |`);
    });
  }
  return lines.join('\n');
}
