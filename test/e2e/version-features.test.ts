// The version matrix is dense where the format changes: every change of a feature's variant between recorded
// releases is between two releases that are neighbours among the published ones, and docs/VERSIONS.md's
// per-feature table is the one the samples give.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { featureChanges, featureTable, publishedReleases, recordedFeatures, TABLE_END, TABLE_START } from './version-features.js';

const FIXTURES = join(import.meta.dirname, '..', 'fixtures', 'real');
const recorded = recordedFeatures(FIXTURES);
const published = publishedReleases(FIXTURES);
const variantOf = (version: string, feature: string) => recorded.find((release) => release.version === version)?.variants[feature];

describe('the feature detector', () => {
  // What test/fixtures/real/README.md says of these releases, seen by hand before the detector existed.
  it.each([
    ['1.0.24', 'resume style', 'new session id and file, the old turns copied (new uuids)'],
    ['1.0.98', 'resume style', 'new session id and file, the old turns copied (same uuids)'],
    ['1.0.128', 'resume style', 'same id, its file appended; a summary-only file'],
    ['2.0.42', 'resume style', 'same id, its file appended; queue-operation rows'],
    ['2.0.0', 'subagent layout', 'the session file'],
    ['2.0.42', 'subagent layout', 'agent-<id>.jsonl beside the session file, agentId'],
    ['2.1.17', 'subagent layout', '<session>/subagents/agent-<id>.jsonl, agentId'],
    ['2.1.114', 'subagent layout', '<session>/subagents/agent-<id>.jsonl, agentId, .meta.json'],
    ['2.0.42', 'Warmup rows', 'agent-<id>.jsonl beside the session file: the answer only'],
    ['2.0.77', 'Warmup rows', 'agent-<id>.jsonl beside the session file: the Warmup prompt and the answer'],
    ['2.1.114', 'toolDenialKind values', 'none'],
    ['2.1.258', 'toolDenialKind values', 'user-rejected'],
    ['1.0.24', 'usage finality', "message_start's usage on the first rows, the final on the last"],
    ['2.1.17', 'usage finality', "message_start's usage on every row (output_tokens 1, no stop_reason)"],
    ['2.1.114', 'usage finality', 'the final usage on every row'],
    ['1.0.24', 'command rows', '"/greet"'],
    ['2.1.17', 'subagent tool', 'Task'],
    ['2.1.114', 'subagent tool', 'Agent'],
    ['1.0.24', "print mode's permission mode", 'not written'],
    ['2.1.17', "print mode's permission mode", 'default (on prompt rows)'],
    ['2.1.293', "print mode's permission mode", 'auto (on prompt rows)'],
  ])('%s: %s is %s', (version, feature, variant) => {
    expect(variantOf(version, feature)).toBe(variant);
  });

  it('tells the denial wordings of the eras apart', () => {
    expect(variantOf('1.0.24', 'denial markers')).toMatch(/^Claude requested permissions to use Bash, but you haven't granted it yet\./);
    expect(variantOf('1.0.98', 'denial markers')).toMatch(/^This command requires approval/);
    expect(variantOf('2.1.17', 'denial markers')).toMatch(/^touch in '<path>' was blocked\./);
  });
});

describe('a change of variant', () => {
  const release = (version: string, variant: string) => ({ version, variants: { 'cost rows': variant } });
  const published = ['1.0.0', '1.0.1', '1.0.3', '1.0.4'];

  it('names the published releases between its recorded neighbours', () => {
    const changes = featureChanges([release('1.0.0', 'none'), release('1.0.4', 'a cost-state row')], published);
    expect(changes).toEqual([{ feature: 'cost rows', before: 'none', after: 'a cost-state row', from: '1.0.0', to: '1.0.4', unrecorded: ['1.0.1', '1.0.3'] }]);
  });

  it('is closed when its neighbours are adjacent, and a release without the feature does not count', () => {
    const changes = featureChanges([release('1.0.0', 'none'), release('1.0.1', 'none'), { version: '1.0.3', variants: {} }, release('1.0.4', 'a cost-state row')], published);
    expect(changes.map((c) => c.unrecorded)).toEqual([['1.0.3']]);
    expect(featureChanges([release('1.0.3', 'none'), release('1.0.4', 'a cost-state row')], published)[0].unrecorded).toEqual([]);
  });
});

describe('the recorded releases', () => {
  it('are published ones', () => {
    expect(recorded.map((release) => release.version).filter((version) => !published.includes(version))).toEqual([]);
  });

  it('leave no change of a feature between two recorded releases with an unrecorded one between them', () => {
    const open = featureChanges(recorded, published).filter((change) => change.unrecorded.length > 0);
    expect(open.map((c) => `${c.feature}: ${c.from} (${c.before}) … ${c.to} (${c.after}), unrecorded: ${c.unrecorded.join(' ')}`)).toEqual([]);
  });

  it("are docs/VERSIONS.md's per-feature table", () => {
    const doc = readFileSync(join(import.meta.dirname, '..', '..', 'docs', 'VERSIONS.md'), 'utf8');
    const table = doc.slice(doc.indexOf(TABLE_START) + TABLE_START.length, doc.indexOf(TABLE_END)).trim();
    expect(table, 'run: npx vite-node test/harness/bisect-releases.ts --write').toBe(featureTable(recorded));
  });
});
