import { execFileSync, spawn } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { compareVersions } from './claude-releases.js';
import { FEATURES, featureChanges, featureTable, publishedReleases, recordedFeatures, TABLE_END, TABLE_START, type FeatureChange } from '../e2e/version-features.js';

// The version matrix chosen by the format: which variant of each feature every recorded release shows, and
// where two recorded neighbours differ with published releases between them.
//   npx vite-node test/harness/bisect-releases.ts              # print the variants and the open changes
//   npx vite-node test/harness/bisect-releases.ts --bisect [--skip X.Y.Z,…]   # record the middle of every open change
//                                                  until none is left (never the releases skipped: recorded elsewhere)
//   npx vite-node test/harness/bisect-releases.ts --write      # the table of docs/VERSIONS.md from the samples
//   npx vite-node test/harness/bisect-releases.ts --releases   # test/fixtures/real/releases.json from the registry

const ROOT = resolve(import.meta.dirname, '..', '..');
const FIXTURES = join(ROOT, 'test', 'fixtures', 'real');
const RELEASES = join(FIXTURES, 'releases.json');
const VERSIONS_DOC = join(ROOT, 'docs', 'VERSIONS.md');
/** Two recordings at once: a run is mostly waiting on its CLI. */
const JOBS = 2;

/** Releases from 1.0.0 on, of the cli.js package and the native one (later 2.1.x are published there only). */
function fetchPublished(): string[] {
  const versionsOf = (name: string) => JSON.parse(execFileSync('npm', ['view', name, 'versions', '--json'], { encoding: 'utf8' })) as string[];
  const all = new Set([...versionsOf('@anthropic-ai/claude-code'), ...versionsOf('@anthropic-ai/claude-code-linux-x64')]);
  return [...all].filter((v) => /^\d+\.\d+\.\d+$/.test(v) && compareVersions(v, '1.0.0') >= 0).sort(compareVersions);
}

function record(version: string, scenarios: string[]): Promise<void> {
  console.log(`recording ${version}: ${scenarios.join(' ')}`);
  const child = spawn('npx', ['vite-node', 'test/harness/make-fixtures.ts', '--release', version, ...scenarios], { cwd: ROOT, stdio: ['ignore', 'inherit', 'inherit'] });
  return new Promise((done) => child.on('exit', () => done()));
}

/** The middle unrecorded release of each open change, with the scenarios its feature is read from. */
function nextRecordings(changes: FeatureChange[], skipped: string[]): Map<string, Set<string>> {
  const wanted = new Map<string, Set<string>>();
  for (const change of changes) {
    const candidates = change.unrecorded.filter((version) => !skipped.includes(version));
    if (candidates.length === 0) continue;
    const middle = candidates[Math.floor((candidates.length - 1) / 2)];
    const scenarios = FEATURES.find((f) => f.name === change.feature)!.scenarios;
    wanted.set(middle, new Set([...(wanted.get(middle) ?? []), ...scenarios]));
  }
  return wanted;
}

async function bisect(skipped: string[]): Promise<void> {
  const tried = new Set<string>();
  for (;;) {
    const wanted = [...nextRecordings(featureChanges(recordedFeatures(FIXTURES), publishedReleases(FIXTURES)), skipped)]
      .map(([version, scenarios]) => ({ version, scenarios: [...scenarios].filter((s) => !tried.has(`${version} ${s}`)) }))
      .filter((w) => w.scenarios.length > 0);
    if (wanted.length === 0) return;
    for (const w of wanted) for (const s of w.scenarios) tried.add(`${w.version} ${s}`);
    const queue = [...wanted];
    await Promise.all(Array.from({ length: JOBS }, async () => {
      for (let next = queue.shift(); next; next = queue.shift()) await record(next.version, next.scenarios);
    }));
  }
}

function writeTable(): void {
  const doc = readFileSync(VERSIONS_DOC, 'utf8');
  const [start, end] = [doc.indexOf(TABLE_START), doc.indexOf(TABLE_END)];
  if (start < 0 || end < start) throw new Error(`${VERSIONS_DOC} has no "${TABLE_START}" … "${TABLE_END}"`);
  writeFileSync(VERSIONS_DOC, `${doc.slice(0, start + TABLE_START.length)}\n${featureTable(recordedFeatures(FIXTURES))}\n${doc.slice(end)}`);
}

function print(): void {
  const recorded = recordedFeatures(FIXTURES);
  for (const feature of FEATURES) {
    console.log(`${feature.name} (${feature.scenarios.join(', ')})`);
    for (const release of recorded) console.log(`  ${release.version.padEnd(8)} ${release.variants[feature.name] ?? '-'}`);
  }
  const open = featureChanges(recorded, publishedReleases(FIXTURES)).filter((c) => c.unrecorded.length > 0);
  console.log(`open changes: ${open.length}`);
  for (const c of open) console.log(`  ${c.feature}: ${c.from} … ${c.to} (${c.unrecorded.length} unrecorded between)`);
}

if (process.argv.includes('--releases')) writeFileSync(RELEASES, JSON.stringify(fetchPublished()) + '\n');
else if (process.argv.includes('--bisect')) await bisect(process.argv.includes('--skip') ? process.argv[process.argv.indexOf('--skip') + 1].split(',') : []);
else if (process.argv.includes('--write')) writeTable();
else print();
