// Acceptance of issue 4: secrets planted everywhere a transcript, hook payload or shell log can hold them
// (planted-corpus.ts) → one `ccotel backfill` into the embedded store AND an OTLP receiver → a scan of
// everything the sidecar wrote (every table, every OTLP request body, its stdout/stderr, the dead-letter dir
// and the rest of its state dir) for any 8-character piece of any planted secret: none. The same corpus with
// innocuous stand-ins measures the false-positive rate; content level `none` exports no text at all.
import { execFile } from 'node:child_process';
import { cpSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CONTENT_ATTRIBUTES } from '../../sidecar/src/processors/content-level.js';
import { openStore, type Store } from '../../sidecar/src/store/open-store.js';
import { findLeaks, plantSecret, SECRET_KINDS } from '../generators/secrets.js';
import { CLI } from '../reliability/cli.js';
import { OtlpCapture, type DecodedOtlp } from './otlp-capture.js';
import { writePlantedCorpus, type PlantedCorpus, type SecretPath } from './planted-corpus.js';
import { storeText } from './store-scan.js';

const execFileAsync = promisify(execFile);
const SEED = 20261130;
const SESSIONS = 24;
const CAP = 4096;
const MARKER = /\[REDACTED:([a-z0-9-]+):([0-9a-f]{6})\]/g;
/** The stated bound on false positives: masks in the secret-free corpus per planted stand-in. */
const MAX_FALSE_POSITIVE_RATE = 0.005;
const SECRET_PATHS: SecretPath[] = ['conversation', 'skipped-transcript-line', 'hook-dead-letter', 'skipped-shell-line', 'cut-shell-command'];

interface Run {
  stateDir: string;
  storeDir: string;
  stdout: string;
  stderr: string;
  otlp: OtlpCapture;
}

/** One `ccotel backfill` with its own state dir (the spool and shell log copied in: the spool is consumed). */
async function backfill(root: string, name: string, corpus: PlantedCorpus, args: string[]): Promise<Run> {
  const stateDir = join(root, name, 'state');
  const storeDir = join(root, name, 'store');
  cpSync(corpus.spoolDir, join(stateDir, 'spool'), { recursive: true });
  cpSync(corpus.shellLogDir, join(stateDir, 'shell'), { recursive: true });
  const otlp = new OtlpCapture();
  await otlp.start();
  const env = Object.fromEntries(Object.entries(process.env).filter(([key]) => !key.startsWith('OTEL_') && !key.startsWith('CCOTEL_')));
  try {
    const { stdout, stderr } = await execFileAsync(
      process.execPath,
      [CLI, 'backfill', '--no-progress', '--json', '--otlp', otlp.url, ...args.map((arg) => arg.replace('{store}', storeDir))],
      {
        env: { ...env, HOME: corpus.home, CLAUDE_CONFIG_DIR: corpus.configDirs.join(','), CCOTEL_STATE_DIR: stateDir, CCOTEL_CONTENT_MAX_LENGTH: String(CAP), CCOTEL_RAW_TTL_DAYS: '0' },
        maxBuffer: 256 << 20,
        // Short of the hook's timeout: a child that hangs is killed and its stderr shows in the failure.
        timeout: 150_000,
      },
    );
    return { stateDir, storeDir, stdout, stderr, otlp };
  } finally {
    await otlp.stop();
  }
}

/** Everything a run wrote: store text (when given), OTLP bodies, stdout/stderr, every file in its state dir. */
function outputsOf(run: Run, storeOutput?: string): Map<string, string> {
  return new Map<string, string>([
    ...(storeOutput === undefined ? [] : [['store', storeOutput] as [string, string]]),
    ['otlp', run.otlp.rawText()],
    ['stdout', run.stdout],
    ['stderr', run.stderr],
    ...[...stateFiles(run.stateDir)].map(([path, text]) => [`state/${path}`, text] as [string, string]),
  ]);
}

/** Every file the sidecar left in its state dir, but for its input (the shell log it reads and leaves). */
function stateFiles(stateDir: string): Map<string, string> {
  const files = new Map<string, string>();
  for (const name of readdirSync(stateDir, { recursive: true, encoding: 'utf8' })) {
    const path = join(stateDir, name);
    if (name === 'shell' || name.startsWith('shell/') || !statSync(path).isFile()) continue;
    files.set(relative(stateDir, path), readFileSync(path, 'latin1'));
  }
  return files;
}

/**
 * Secrets of every kind made apart from the corpus: pieces they share with the planted ones are structure, not
 * secret (a JWT's header and the start of its payload, `{"sub":"`, are the same in every token).
 */
const STRUCTURE = SECRET_KINDS.flatMap((kind) => [1, 2, 3].map(() => plantSecret(kind).text)).join('\n');

/** Each secret with a readable piece, once per place: the place and the text around the first piece. */
function leaksIn(places: Map<string, string>, secrets: string[]): string[] {
  const found: string[] = [];
  for (const [place, text] of places) {
    const pieces = findLeaks(text, secrets, STRUCTURE);
    for (const secret of secrets) {
      const piece = pieces.find((leaked) => secret.includes(leaked));
      if (piece === undefined) continue;
      const at = text.indexOf(piece);
      found.push(`${place}: …${text.slice(Math.max(0, at - 60), at + 40).replaceAll('\n', '⏎')}…`);
    }
  }
  return found;
}

function markersIn(text: string): { rule: string; fingerprint: string }[] {
  return [...text.matchAll(MARKER)].map((match) => ({ rule: match[1], fingerprint: match[2] }));
}

/** tag → every fingerprint of the first marker after it (the repeated secret planted right behind the tag). */
function repeatFingerprints(text: string, tags: string[]): Map<string, Set<string>> {
  const byTag = new Map<string, Set<string>>();
  for (const tag of tags) {
    const set = new Set<string>();
    const pattern = new RegExp(`${tag}: [^\\[]{0,200}?\\[REDACTED:[a-z0-9-]+:([0-9a-f]{6})\\]`, 'g');
    for (const match of text.matchAll(pattern)) set.add(match[1]);
    byTag.set(tag, set);
  }
  return byTag;
}

function allStrings(decoded: DecodedOtlp): string {
  const values = (attributes: Record<string, unknown>) => Object.values(attributes).filter((value) => typeof value === 'string');
  return [
    ...decoded.spans.flatMap((span) => [span.name, span.statusMessage, ...values(span.attributes), ...span.events.flatMap((event) => [event.name, ...values(event.attributes)])]),
    ...decoded.logs.flatMap((log) => [log.body, ...values(log.attributes)]),
    ...decoded.points.flatMap((point) => values(point.attributes)),
  ].join('\n');
}

describe('planted secrets → backfill → embedded store + OTLP: nothing readable anywhere', () => {
  const root = mkdtempSync(join(tmpdir(), 'ccotel-secrets-'));
  let planted: PlantedCorpus;
  let clean: PlantedCorpus;
  let masked: Run;
  let none: Run;
  let cleanRun: Run;
  let store: Store;
  let stored: string;
  let otlp: DecodedOtlp;

  beforeAll(async () => {
    [planted, clean] = await Promise.all([
      writePlantedCorpus({ seed: SEED, root: join(root, 'planted'), sessions: SESSIONS, capLength: CAP }),
      writePlantedCorpus({ seed: SEED, root: join(root, 'clean'), sessions: SESSIONS, capLength: CAP, clean: true }),
    ]);
    [masked, none, cleanRun] = await Promise.all([
      backfill(root, 'masked', planted, ['--store', '{store}']),
      backfill(root, 'none', planted, ['--store', '{store}', '--content-level', 'none']),
      backfill(root, 'clean', clean, ['--store', 'none']),
    ]);
    store = await openStore(masked.storeDir, { command: 'test', access: 'read' });
    stored = await storeText(store.client);
    otlp = masked.otlp.decode();
  }, 180_000);

  afterAll(async () => {
    await store?.close();
    rmSync(root, { recursive: true, force: true });
  });

  it('plants every kind of secret in every place, in the same places as the clean corpus', () => {
    for (const kind of SECRET_KINDS) expect(planted.kinds[kind], kind).toBeGreaterThanOrEqual(3);
    for (const [place, count] of Object.entries(planted.places)) expect(count, place).toBeGreaterThan(0);
    expect(Object.keys(planted.places).length).toBe(16);
    expect(clean.places).toEqual(planted.places);
    for (const path of SECRET_PATHS) {
      expect(planted.secrets[path].length, path).toBeGreaterThan(0);
      expect(clean.secrets[path], path).toEqual([]);
    }
    expect(planted.secrets.conversation.length).toBeGreaterThan(300);
  });

  it('delivered to both sinks', () => {
    const summary = JSON.parse(masked.stdout) as { inserted: { spans: number; logs: number; metrics: number }; hookEvents: { read: number; deadLettered: number } };
    expect(summary.inserted.spans).toBeGreaterThan(100);
    expect(summary.hookEvents.deadLettered).toBe(3);
    expect(otlp.spans.length).toBeGreaterThanOrEqual(summary.inserted.spans);
    expect(otlp.logs.length).toBeGreaterThanOrEqual(summary.inserted.logs);
  });

  // One test per path a secret takes into the sidecar, so a leak names the path that lets it through.
  it.each(SECRET_PATHS)('leaves no 8-character piece of a secret (%s) in the store, the OTLP requests, the output or the state dir', (path) => {
    expect(stored.length).toBeGreaterThan(1e6);
    expect(leaksIn(outputsOf(masked, stored), planted.secrets[path])).toEqual([]);
  });

  it('consumes the whole hook spool', () => {
    expect(readdirSync(join(masked.stateDir, 'spool')).filter((name) => name.endsWith('.json'))).toEqual([]);
  });

  it('masks with [REDACTED:<rule>:<fingerprint>] on every text path, and each marker has its detection record', async () => {
    const columns = await (
      await store.client.query({
        query: `SELECT
            arrayStringConcat(groupArray(SpanAttributes['ccotel.prompt']), '\n') AS prompt,
            arrayStringConcat(groupArray(SpanAttributes['ccotel.tool.input']), '\n') AS toolInput,
            arrayStringConcat(groupArray(SpanAttributes['ccotel.tool.output']), '\n') AS toolOutput,
            arrayStringConcat(groupArray(SpanAttributes['process.command_line']), '\n') AS commandLine
          FROM otel_traces`,
        format: 'JSONEachRow',
      })
    ).json<Record<string, string>>();
    const bodies = await (
      await store.client.query({ query: `SELECT EventName AS event, arrayStringConcat(groupArray(Body), '\n') AS body FROM otel_logs GROUP BY event`, format: 'JSONEachRow' })
    ).json<{ event: string; body: string }>();
    const bodyOf = (event: string) => bodies.find((row) => row.event === event)?.body ?? '';
    const paths = { ...columns[0], prompts: bodyOf('ccotel.prompt.submitted'), hookPrompts: bodyOf('ccotel.hook.user_prompt_submit'), hookToolInputs: bodyOf('ccotel.hook.pre_tool_use'), skipped: bodyOf('ccotel.record.skipped') };
    for (const [path, text] of Object.entries(paths)) expect(markersIn(text).length, path).toBeGreaterThan(3);

    const detections = await (
      await store.client.query({
        query: `SELECT LogAttributes AS attributes, Body AS body FROM otel_logs WHERE EventName = 'ccotel.secret.detected' LIMIT 1 BY LogAttributes['ccotel.record.id']`,
        format: 'JSONEachRow',
      })
    ).json<{ attributes: Record<string, string>; body: string }>();
    const known = new Set(detections.map(({ attributes }) => `${attributes.rule}:${attributes['ccotel.secret.fingerprint']}`));
    const markers = markersIn(stored);
    expect(markers.length).toBeGreaterThan(planted.planted);
    for (const { rule, fingerprint } of markers) expect(known.has(`${rule}:${fingerprint}`), `${rule}:${fingerprint}`).toBe(true);
    // A marker is never cut: every "[REDACTED:" starts a whole marker.
    expect(stored.split('[REDACTED:').length - 1).toBe(markers.length);
    expect(masked.otlp.rawText().split('[REDACTED:').length - 1).toBe(markersIn(masked.otlp.rawText()).length);

    for (const { attributes, body } of detections) {
      expect(attributes.rule).toMatch(/^[a-z0-9-]+$/);
      expect(attributes['ccotel.secret.fingerprint']).toMatch(/^[0-9a-f]{6}$/);
      expect(body).toBe(`secret masked: ${attributes.rule} in ${attributes['ccotel.secret.field']}`);
      if ((CONTENT_ATTRIBUTES as readonly string[]).includes(attributes['ccotel.secret.field'])) expect(attributes['session.id'], body).toBeTruthy();
    }
  });

  it('gives a repeated secret the same fingerprint wherever it turns up, in the store and over OTLP', () => {
    const inStore = repeatFingerprints(stored, planted.repeatTags);
    const overOtlp = repeatFingerprints(allStrings(otlp), planted.repeatTags);
    const distinct = new Set<string>();
    for (const tag of planted.repeatTags) {
      expect([...inStore.get(tag)!], tag).toHaveLength(1);
      expect(overOtlp.get(tag), tag).toEqual(inStore.get(tag));
      distinct.add([...inStore.get(tag)!][0]);
    }
    expect(distinct.size).toBe(planted.repeatTags.length);
    // Each repeat is found in several places (prompt, hook, command line, tool output…).
    for (const tag of planted.repeatTags) expect(stored.split(`${tag}: `).length - 1, tag).toBeGreaterThanOrEqual(3);
  });

  it('counts every detection in ccotel.redactions{rule}, in the store and over OTLP', async () => {
    const byRule = async (query: string) =>
      Object.fromEntries(
        (await (await store.client.query({ query: `${query} SETTINGS output_format_json_quote_64bit_integers = 0`, format: 'JSONEachRow' })).json<{ rule: string; n: number }>()).map((row) => [row.rule, row.n]),
      );
    const points = await byRule(
      `SELECT Attributes['rule'] AS rule, toUInt64(sum(Value)) AS n FROM (SELECT * FROM otel_metrics_sum WHERE MetricName = 'ccotel.redactions' LIMIT 1 BY Exemplars.FilteredAttributes) GROUP BY rule`,
    );
    const detections = await byRule(
      `SELECT LogAttributes['rule'] AS rule, count() AS n FROM (SELECT * FROM otel_logs WHERE EventName = 'ccotel.secret.detected' LIMIT 1 BY LogAttributes['ccotel.record.id']) GROUP BY rule`,
    );
    expect(Object.keys(points).length).toBeGreaterThan(10);
    expect(points).toEqual(detections);
    const otlpPoints = otlp.points.filter((point) => point.name === 'ccotel.redactions').length;
    expect(otlpPoints).toBe(otlp.logs.filter((log) => log.eventName === 'ccotel.secret.detected').length);
    expect(otlpPoints).toBe(Object.values(points).reduce((sum, n) => sum + n, 0));
  });

  it('caps long fields after masking, keeping <key>.original_length', () => {
    type Item = { attributes: Record<string, string | number | boolean>; fields: Record<string, unknown> };
    const items: Item[] = [
      ...otlp.spans.map((span) => ({ attributes: span.attributes, fields: { ...span.attributes, status_message: span.statusMessage } })),
      ...otlp.spans.flatMap((span) => span.events.map((event) => ({ attributes: event.attributes, fields: event.attributes }))),
      ...otlp.logs.map((log) => ({ attributes: log.attributes, fields: { ...log.attributes, body: log.body } })),
    ];
    const capped: string[] = [];
    for (const { attributes, fields } of items) {
      for (const [key, value] of Object.entries(fields)) {
        if (typeof value !== 'string') continue;
        expect(value.length, key).toBeLessThanOrEqual(CAP);
        const original = attributes[`${key}.original_length`];
        if (original === undefined) continue;
        capped.push(key);
        expect(value.endsWith('…'), key).toBe(true);
        expect(original, key).toBeGreaterThan(CAP);
      }
    }
    // Every field secrets were placed across the cap in, and the hook, log and shell copies of them.
    for (const key of ['ccotel.prompt', 'ccotel.tool.input', 'ccotel.tool.output', 'process.command_line', 'body']) expect(capped, key).toContain(key);
    expect(otlp.points.filter((point) => point.name === 'ccotel.truncations').length).toBe(capped.length);
  });

  it('masks nothing in the same corpus without secrets (false-positive rate)', () => {
    const places = outputsOf(cleanRun);
    const falsePositives = [...places].flatMap(([place, text]) =>
      [...text.matchAll(MARKER)].map((match) => `${place}: …${text.slice(Math.max(0, match.index - 80), match.index + 40)}…`),
    );
    const decoded = cleanRun.otlp.decode();
    expect(decoded.spans.length).toBeGreaterThan(100);
    const strings = allStrings(decoded).split('\n').length;
    console.log(`false positives: ${falsePositives.length} markers for ${clean.planted} planted stand-ins, in ${strings} exported lines of text`);
    expect(falsePositives.length / clean.planted, falsePositives.slice(0, 10).join('\n')).toBeLessThanOrEqual(MAX_FALSE_POSITIVE_RATE);
    expect(decoded.logs.filter((log) => log.eventName === 'ccotel.secret.detected')).toEqual([]);
  });

  describe('content level none', () => {
    let noneStore: string;

    beforeAll(async () => {
      const query = async (sql: string) =>
        (await execFileAsync(process.execPath, [CLI, 'query', sql, '--store', none.storeDir, '--format', 'TSV'], { maxBuffer: 256 << 20 })).stdout;
      const tables = (await query(`SELECT name FROM system.tables WHERE database = currentDatabase() AND engine NOT LIKE '%View%'`)).split('\n').filter(Boolean);
      noneStore = await query(tables.map((table) => `SELECT formatRow('TabSeparated', *) FROM \`${table}\``).join(' UNION ALL '));
    }, 60_000);

    it('exports no prompt, tool or command text and no log body, to either sink', () => {
      const decoded = none.otlp.decode();
      expect(decoded.spans.length).toBeGreaterThan(100);
      for (const span of decoded.spans) {
        for (const key of CONTENT_ATTRIBUTES) expect(span.attributes[key], `${span.name} ${key}`).toBeUndefined();
        for (const event of span.events) for (const key of CONTENT_ATTRIBUTES) expect(event.attributes[key], `${event.name} ${key}`).toBeUndefined();
        expect(span.statusMessage).toBe('');
      }
      for (const log of decoded.logs) for (const key of CONTENT_ATTRIBUTES) expect(log.attributes[key], `${log.eventName} ${key}`).toBeUndefined();
      // The only bodies left are the sidecar's own words about a detection (in a name, e.g. `shell <program>`).
      for (const log of decoded.logs.filter(({ body }) => body !== '')) {
        expect(log.eventName).toBe('ccotel.secret.detected');
        expect(log.body).toMatch(/^secret masked: [a-z0-9-]+ in name$/);
      }
      // The stored rows are the same items: none of the planted text (tags, padding) is in them either.
      for (const output of [noneStore, none.otlp.rawText()]) {
        expect(output.length).toBeGreaterThan(1e5);
        for (const text of [...planted.repeatTags, 'build step ok;']) expect(output.includes(text), text).toBe(false);
      }
    });

    it.each(SECRET_PATHS)('leaves no piece of a secret (%s) in any output', (path) => {
      expect(leaksIn(outputsOf(none, noneStore), planted.secrets[path])).toEqual([]);
    });
  });
});
