// `ccotel report` through a running sidecar's endpoint is mostly its own start-up: it must load only what the
// answer needs (the HTTP client, the report's SQL), never the engine, the OpenTelemetry SDK, the secret rules, or
// the parsers of files it does not read (issue 36). The built CLI is run with a preload that lists every module
// the process loads, ES module or CommonJS, against an endpoint that answers like the store's.
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { assertBuilt, CLI, cliEnv, runProcess } from '../../../test/reliability/cli.js';
import { SIDECAR_VERSION } from '../resource.js';
import { writeLock } from '../store/open-store.js';
import { KeptAnswers } from '../store/kept-answers.js';
import { startQueryEndpoint, type QueryEndpoint } from '../store/query-endpoint.js';
import type { ReadRequest } from '../store/reader.js';

/** Appends the URL of every ES module loaded (from the loader's thread) and, at exit, the path of every CommonJS one. */
const PRELOAD = `
import { appendFileSync } from 'node:fs';
import { createRequire, register } from 'node:module';
const out = process.env.LOADED_MODULES;
register('data:text/javascript,' + encodeURIComponent(\`
  import { appendFileSync } from 'node:fs';
  export async function load(url, context, next) { appendFileSync(\${JSON.stringify(out)}, url + '\\\\n'); return next(url, context); }\`));
const cache = createRequire(import.meta.url).cache;
process.on('exit', () => appendFileSync(out, Object.keys(cache).join('\\n') + '\\n'));
`;

/**
 * What a report asked through the endpoint has no use for: commander (its plain arguments are read without it), and of
 * the ClickHouse client only its parameter formatting and error parsing (store/endpoint-client.ts).
 */
const NOT_NEEDED = ['chdb', '@chdb/', '@opentelemetry/', '@secretlint/', '@pydantic/genai-prices', 'yaml', 'fastest-levenshtein', 'cli-table3', 'commander'];
const CLIENT_PARTS_USED = /@clickhouse\/client\/dist\/common\/(?:data_formatter\/format_query_params|error\/error)\.js$/;

describe('report through a running sidecar loads only what it needs', () => {
  let home: string;
  let endpoint: QueryEndpoint;
  const asked: ReadRequest[] = [];

  beforeAll(async () => {
    assertBuilt();
    home = mkdtempSync(join(tmpdir(), 'ccotel-report-loading-'));
    // A store directory held by a live process (this one) that serves it: the CLI goes to the endpoint.
    mkdirSync(join(home, 'store', 'chdb'), { recursive: true });
    endpoint = await startQueryEndpoint({
      query: async (request) => {
        asked.push(request);
        return Buffer.from('');
      },
      close: () => {},
    }, undefined, new KeptAnswers(() => 'the store, unchanged'));
    writeLock(join(home, 'store'), { pid: process.pid, command: 'run', endpoint: { url: endpoint.url, token: endpoint.token } });
    writeFileSync(join(home, 'preload.mjs'), PRELOAD);
  });

  afterAll(async () => {
    await endpoint?.close();
    rmSync(home, { recursive: true, force: true });
  });

  /** `report …` run with the preload; the modules it loaded. */
  async function report(args: string[], loaded: string) {
    const result = await runProcess(process.execPath, ['--import', join(home, 'preload.mjs'), CLI, 'report', ...args, '--timezone', 'UTC', '--store', join(home, 'store')],
      { ...cliEnv(home), LOADED_MODULES: loaded });
    return { result, modules: readFileSync(loaded, 'utf8').split('\n').filter(Boolean) };
  }

  it.each([['daily'], ['session'], ['blocks']])('report %s --json answers from the endpoint without the engine, the SDK, the config parser, commander or the client', async (period) => {
    asked.length = 0;
    const { result, modules } = await report([period, '--json'], join(home, `loaded-${period}.txt`));
    expect(result.stderr).toBe('');
    expect(result.status).toBe(0);
    expect(JSON.parse(result.stdout)).toMatchObject({ period, rows: [] });
    expect(asked.length).toBeGreaterThan(0);
    expect(modules.filter((module) => module.includes('node_modules/@clickhouse/')).every((module) => CLIENT_PARTS_USED.test(module))).toBe(true);
    const packages = modules.flatMap((module) => /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(module)?.[1] ?? []);
    expect([...new Set(packages.filter((name) => NOT_NEEDED.some((heavy) => name === heavy || name.startsWith(heavy))))]).toEqual([]);
  });

  it.each([['weekly', 'usage'], ['insights', 'insights']])('report %s asked again prints the kept output without asking the engine or loading the queries, the schemas or the prices', async (period, module) => {
    const first = await report([period], join(home, `loaded-${period}-first.txt`));
    asked.length = 0;
    const again = await report([period], join(home, `loaded-${period}-again.txt`));
    expect(again.result.status).toBe(0);
    expect(again.result.stdout).toBe(first.result.stdout);
    expect(asked).toEqual([]);
    expect(first.modules.filter((loaded) => loaded.includes('/schemas/') || loaded.endsWith(`/report/${module}.js`))).not.toEqual([]);
    expect(again.modules.filter((loaded) => /\/(?:schemas\/|report\/(?:usage|insights|overview|queries|select)\.js$|store\/open-store\.js$|@pydantic\/genai-prices)/.test(loaded))).toEqual([]);
  });
  it('ccotel --version prints the version without loading a command', async () => {
    const loaded = join(home, 'loaded-version.txt');
    const result = await runProcess(process.execPath, ['--import', join(home, 'preload.mjs'), CLI, '--version'], { ...cliEnv(home), LOADED_MODULES: loaded });
    expect(result.status).toBe(0);
    expect(result.stdout.trim()).toBe(SIDECAR_VERSION);
    expect(readFileSync(loaded, 'utf8').split('\n').filter((module) => /\/commands\/|node_modules\/commander\//.test(module))).toEqual([]);
  });
});
