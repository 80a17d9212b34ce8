// Writes a generated transcript corpus and its expected answer.
//   npm run build && node dist/bench/gen-corpus.js --seed 1 --out /tmp/corpus --bytes 1G
import { parseArgs } from 'node:util';
import { generateCorpus, type HostLayout } from '../test/generator/corpus.js';

const UNITS: Record<string, number> = { '': 1, K: 1e3, M: 1e6, G: 1e9, KB: 1e3, MB: 1e6, GB: 1e9 };

function parseBytes(value: string): number {
  const match = /^(\d+(?:\.\d+)?)\s*([KMG]?B?)$/i.exec(value.trim());
  if (!match) throw new Error(`--bytes: expected a size like 500K, 20M or 1G, got "${value}"`);
  return Math.round(Number(match[1]) * UNITS[match[2].toUpperCase()]);
}

const { values } = parseArgs({
  options: {
    seed: { type: 'string', default: '1' },
    out: { type: 'string' },
    bytes: { type: 'string', default: '0' },
    sessions: { type: 'string', default: '0' },
    layout: { type: 'string', default: 'multi-root' },
    scale: { type: 'string', default: '1' },
    help: { type: 'boolean', default: false },
  },
});

if (values.help || !values.out) {
  console.log(`usage: gen-corpus --out DIR [--seed N] [--bytes 1G] [--sessions N] [--layout multi-root|single-root] [--scale 1]
  Writes DIR/projects/** (plus DIR/home/.claude and DIR/home/.config/claude with multi-root)
  and DIR/expected.json. The same seed always gives the same bytes.`);
  process.exit(values.help ? 0 : 2);
}
if (values.layout !== 'multi-root' && values.layout !== 'single-root') throw new Error('--layout: multi-root or single-root');

const started = performance.now();
const expected = await generateCorpus({
  seed: Number(values.seed),
  root: values.out,
  targetBytes: parseBytes(values.bytes),
  sessions: Number(values.sessions),
  hostLayout: values.layout as HostLayout,
  contentScale: Number(values.scale),
});
const seconds = (performance.now() - started) / 1000;
console.log(
  `${(expected.bytes / 1e6).toFixed(1)} MB in ${expected.files} files, ${expected.sessions} sessions, ${expected.turns} turns, ` +
    `${expected.chatSpans} chat spans, ${expected.toolCalls} tool calls; ${seconds.toFixed(1)} s (${(expected.bytes / 1e6 / seconds).toFixed(0)} MB/s)`,
);
console.log(`CLAUDE_CONFIG_DIR=${expected.configDirs.join(',')}`);
