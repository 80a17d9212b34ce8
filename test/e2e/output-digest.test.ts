// The whole output of the pipeline (every span, log and point, by id and content) over the generated corpus with
// its hook spool and shell log, and over each recorded real Claude Code fixture, kept as a snapshot: a change to
// how telemetry is correlated or encoded that changes one byte of one item changes its digest. The snapshot file
// was written by the code before the encoder refactor, so it holds that refactor to identical output.
import { createHash } from 'node:crypto';
import { appendFileSync, cpSync, mkdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { buildPipeline } from '../../sidecar/src/build-pipeline.js';
import { loadConfig } from '../../sidecar/src/config.js';
import { readHistory } from '../../sidecar/src/read-history.js';
import { discoverTranscripts, transcriptRoots } from '../../sidecar/src/sources/transcript-discovery.js';
import { generateCorpus } from '../generator/corpus.js';
import { generateHooksAndShell } from '../generator/hooks-shell.js';
import { MemorySink } from '../helpers/memory-sink.js';
import { outputLines, recordedFixtures } from './recorded-fixtures.js';

const FIXTURES = join(import.meta.dirname, '..', 'fixtures', 'real');
/**
 * Input files are named in some ids (skipped lines): the input sits at the same path in every run and checkout
 * (the system's temp dir, not the run's own: test/global-tmp.ts), and is removed at the end.
 */
const ROOT = join(process.env.CCOTEL_TEST_FIXED_TMPDIR ?? tmpdir(), 'ccotel-output-digest');
afterAll(() => rmSync(ROOT, { recursive: true, force: true }));

function freshDir(name: string): string {
  const dir = join(ROOT, name);
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  return dir;
}

/** Backfill (content as is, no store) of what `env` points at; the items the sink received. */
async function output(env: NodeJS.ProcessEnv): Promise<MemorySink> {
  const saved = { ...process.env };
  Object.assign(process.env, env, { CCOTEL_ALLOW_RAW_CONTENT: '1', CCOTEL_RAW_TTL_DAYS: '0' });
  try {
    const config = loadConfig({ store: 'none', contentLevel: 'raw' });
    const sink = new MemorySink();
    const built = buildPipeline(config, { mode: 'once', sinks: [sink], keepSpool: true });
    await built.readSideInputs();
    const files = await discoverTranscripts(transcriptRoots(), () => {});
    await readHistory(built.pipeline, files, { idleMs: config.idleMs });
    await built.pipeline.finish();
    await built.spool.settle();
    return sink;
  } finally {
    process.env = saved;
  }
}

/** Counts, and one digest over every item as `kind id content`, sorted (delivery order is not part of the output). */
function digest(sink: MemorySink): { spans: number; logs: number; metrics: number; sha256: string } {
  const { spans, logs, metrics } = sink.received;
  const lines = outputLines(sink);
  // To find the item that changed: DIGEST_DUMP=<file> appends the lines digested, for a diff of two runs.
  if (process.env.DIGEST_DUMP) appendFileSync(process.env.DIGEST_DUMP, `${lines.join('\n')}\n====\n`);
  return { spans: spans.length, logs: logs.length, metrics: metrics.length, sha256: createHash('sha256').update(lines.join('\n')).digest('hex') };
}

describe('the whole output, by id and content', () => {
  it('of the generated corpus with its hook spool and shell log', { timeout: 300_000 }, async () => {
    const root = freshDir('generated');
    const stateDir = join(root, 'state');
    const corpus = await generateCorpus({ seed: 20261129, root: join(root, 'corpus'), sessions: 30, hostLayout: 'multi-root' });
    generateHooksAndShell({ seed: 20261129, configDirs: corpus.configDirs, spoolDir: join(stateDir, 'spool'), shellLogDir: join(stateDir, 'shell') });
    const sink = await output({ HOME: join(root, 'corpus', 'home'), CLAUDE_CONFIG_DIR: corpus.configDirs.join(','), CCOTEL_STATE_DIR: stateDir });
    expect(digest(sink)).toMatchSnapshot();
  });

  const recorded = recordedFixtures(FIXTURES);

  it.each(recorded)('of the recorded fixture %s', { timeout: 120_000 }, async (name) => {
    const root = freshDir(name);
    cpSync(join(FIXTURES, name), join(root, 'config'), { recursive: true });
    const sink = await output({ HOME: join(root, 'home'), CLAUDE_CONFIG_DIR: join(root, 'config'), CCOTEL_STATE_DIR: join(root, 'state') });
    expect(sink.received.spans.length + sink.received.logs.length).toBeGreaterThan(0);
    expect(digest(sink)).toMatchSnapshot();
  });
});
