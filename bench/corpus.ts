// What the backfill benchmarks share: the generated corpus they read (made once per size, seed and mix, then reused)
// and the floor they are measured against: Node reading every line and JSON.parse on one core.
import { createReadStream, existsSync, readFileSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { generateCorpus, type Expected } from '../test/generator/corpus.js';

/** Transcripts under each config dir's projects/ (config dirs may nest: read each projects/ once). */
export function jsonlFiles(configDir: string): string[] {
  const projects = join(configDir, 'projects');
  return (readdirSync(projects, { recursive: true }) as string[]).filter((f) => f.endsWith('.jsonl')).map((f) => join(projects, f));
}

function parseBytes(text: string): number {
  const match = /^(\d+(?:\.\d+)?)([KMG]?)$/i.exec(text);
  if (!match) throw new Error(`--bytes: "${text}" is not a size like 200M or 1G`);
  return Number(match[1]) * { '': 1, K: 1e3, M: 1e6, G: 1e9 }[match[2].toUpperCase() as '' | 'K' | 'M' | 'G'];
}

/** The corpus of `bytes` (e.g. 200M, 1G) under `dir`, generated on first use: `scale` multiplies the large non-conversation rows. */
export async function benchCorpus(options: { dir: string; bytes: string; seed: number; scale: number }): Promise<Expected> {
  const corpusDir = join(options.dir, `corpus-${options.bytes}-${options.seed}-x${options.scale}`);
  if (existsSync(join(corpusDir, 'expected.json'))) {
    console.error(`reusing corpus ${corpusDir}`);
    return JSON.parse(readFileSync(join(corpusDir, 'expected.json'), 'utf8')) as Expected;
  }
  console.error(`generating ${options.bytes} corpus into ${corpusDir} …`);
  return generateCorpus({ seed: options.seed, root: corpusDir, targetBytes: parseBytes(options.bytes), contentScale: options.scale });
}

/** The floor: read every line and JSON.parse it, nothing else, on one core. */
export async function floor(configDirs: string[]): Promise<{ seconds: number; bytes: number; lines: number; conversationBytes: number }> {
  const started = performance.now();
  let bytes = 0;
  let lines = 0;
  let conversationBytes = 0;
  for (const file of configDirs.flatMap(jsonlFiles)) {
    bytes += statSync(file).size;
    for await (const line of createInterface({ input: createReadStream(file), crlfDelay: Infinity })) {
      lines++;
      try {
        const type = (JSON.parse(line) as { type?: unknown } | null)?.type;
        if (type === 'user' || type === 'assistant' || type === 'system') conversationBytes += line.length;
      } catch {
        // malformed lines are part of the corpus
      }
    }
  }
  return { seconds: (performance.now() - started) / 1000, bytes, lines, conversationBytes };
}

