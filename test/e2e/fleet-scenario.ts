// The fleet scenario both fleet tests run (fleet.test.ts without faults, fleet-faults.test.ts with them), every tier
// as shipped (deploy/local-fleet.ts): three agent hosts, each a `ccotel run` sidecar with its own HOME, host name,
// transcripts and embedded store → scale-out.yaml (load_balancing by trace id) → two gateways (gateway.yaml) → the
// real clickhouse exporter → ClickHouse (the test front over the embedded engine, tables, views and summaries made by
// schemas/sql). One generated corpus is split over the hosts by project and appended live a slice at a time; with
// faults, on the way:
//   - gateway-1 is killed (SIGKILL) while the hosts send the next slice, and started again;
//   - ClickHouse is killed (SIGKILL) and stays down while the hosts send (FLEET_CLICKHOUSE_OUTAGE_S, default 20 s
//     to keep the suite short; the minute is `FLEET_CLICKHOUSE_OUTAGE_S=60`), then started again;
//   - host-2's sidecar is stopped while its transcripts grow, and started again.
// The reference is the union of the hosts' own embedded stores: their rows copied into one embedded store, whose
// views fill its summaries as the hosts' did.
//
// Gateway kill and tail sampling: a gateway holds a trace's spans in memory until it decides on the trace
// (CCOTEL_TAIL_DECISION_WAIT, 3 s here), and a crash loses an undecided trace it had acknowledged (see
// collector-config/README.md). The kill comes after the hosts were quiet for longer than that; what the hosts send
// while the gateway is down waits in the scale-out tier's disk queue.
import { appendFileSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative } from 'node:path';
import { createClient, type ClickHouseClient } from '@clickhouse/client';
import { LocalFleet } from '../../deploy/local-fleet.js';
import { POINT_ID_KEY, RECORD_ID_KEY } from '../../sidecar/src/semconv.js';
import { openStore } from '../../sidecar/src/store/open-store.js';
import { USAGE_TABLES } from '../../schemas/usage.js';
import { generateCorpus } from '../generator/corpus.js';
import { assertBuilt, runCli } from '../reliability/cli.js';

export const DASHBOARD_DIR = join(import.meta.dirname, '..', '..', 'dashboards');
export const HOSTS = ['host-1', 'host-2', 'host-3'];
const STEPS = 6;
const DAY_MS = 86_400_000;
/** How old the history older than the raw TTL is (the shipped TTL: 30 days). */
const HISTORY_DAYS = 45;
/** Raw rows a store keeps (the shipped 30-day raw TTL, a day's margin): the ids compared in the raw tables. */
const IN_RAW_WINDOW = 'Timestamp > now() - INTERVAL 29 DAY';
const OUTAGE_MS = Number(process.env.FLEET_CLICKHOUSE_OUTAGE_S ?? 20) * 1000;
/** Longer than the gateways' tail-sampling decision wait (3 s) plus the sidecars' flush. */
const QUIET_MS = 8_000;
export const PERIODS = [[], ['daily'], ['weekly'], ['monthly'], ['session'], ['blocks'], ['insights']];


const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Every transcript file of the corpus with the host it goes to (whole projects per host) and its lines. */
function splitCorpus(projects: string): { host: number; relativePath: string; lines: string[] }[] {
  const files: { host: number; relativePath: string; lines: string[] }[] = [];
  readdirSync(projects).sort().forEach((project, index) => {
    const walk = (path: string): void => {
      if (statSync(path).isDirectory()) for (const entry of readdirSync(path).sort()) walk(join(path, entry));
      else files.push({ host: index % HOSTS.length, relativePath: relative(projects, path), lines: readFileSync(path, 'utf8').match(/[^\n]*\n|[^\n]+$/g) ?? [] });
    };
    walk(join(projects, project));
  });
  return files;
}

const RAW_TABLES = ['otel_traces', 'otel_logs', 'otel_metrics_gauge', 'otel_metrics_sum', 'otel_metrics_histogram', 'otel_metrics_exp_histogram', 'otel_metrics_summary'];

const RECORD_AND_POINT_IDS = `SELECT LogAttributes['${RECORD_ID_KEY}'] AS id, concat('log ', EventName) AS what FROM otel_logs WHERE LogAttributes['${RECORD_ID_KEY}'] != '' AND ${IN_RAW_WINDOW}
      UNION ALL SELECT arrayJoin(Exemplars.FilteredAttributes)['${POINT_ID_KEY}'], concat('point ', MetricName) FROM otel_metrics_sum WHERE ${IN_RAW_WINDOW.replace('Timestamp', 'TimeUnix')}
      UNION ALL SELECT arrayJoin(Exemplars.FilteredAttributes)['${POINT_ID_KEY}'], concat('point ', MetricName) FROM otel_metrics_histogram WHERE ${IN_RAW_WINDOW.replace('Timestamp', 'TimeUnix')}`;
const SPAN_IDS = `SELECT SpanId AS id, concat('span ', SpanName, ' of trace ', TraceId) AS what FROM otel_traces WHERE ${IN_RAW_WINDOW}`;
/** The span facts' ids (every turn, tool call and API response, stored in otel_traces or not): what the figures count. */
const FACT_IDS = `SELECT SpanId AS id, concat('facts of span ', Kind, ' ', Name, ' of trace ', TraceId) AS what FROM ccotel_span_facts`;
/** Every span, log record and metric point id in a store, with what it is (for failure messages). */
const IDS_SQL = `SELECT id, any(what) AS what FROM (${SPAN_IDS} UNION ALL ${RECORD_AND_POINT_IDS}) GROUP BY id`;
/** As IDS_SQL, a span counted as there when its facts are (a whole trace a killed gateway held undecided loses only its detail). */
const FIGURE_IDS_SQL = `SELECT id, any(what) AS what FROM (${FACT_IDS} UNION ALL ${RECORD_AND_POINT_IDS}) GROUP BY id`;
export const ids = async (client: ClickHouseClient, sql = IDS_SQL) => new Set((await rows<{ id: string }>(client, sql)).map((row) => row.id));
/** Every span id in otel_traces, with its trace. */
export const spanTraces = async (client: ClickHouseClient) => new Map((await rows<{ id: string; trace: string }>(client, 'SELECT DISTINCT SpanId AS id, TraceId AS trace FROM otel_traces')).map((row) => [row.id, row.trace]));

/** `ccotel query` on a host's store (through its running sidecar's endpoint while it runs), as JSON lines. */
async function query(dir: string, sql: string, store: string): Promise<string> {
  const result = await runCli(['query', sql, '--format', 'JSONEachRow', '--store', store], { PATH: process.env.PATH, HOME: dir, CCOTEL_CONFIG: 'none', CCOTEL_STATE_DIR: join(dir, 'reader', 'state') }, 180_000);
  if (result.status !== 0) throw new Error(`query --store ${store}: ${result.stderr}`);
  return result.stdout;
}

export async function rows<T = Record<string, unknown>>(client: ClickHouseClient, query: string): Promise<T[]> {
  return (await client.query({ query, format: 'JSONEachRow' })).json<T>();
}

async function report(args: string[], store: string, home: string): Promise<unknown> {
  const result = await runCli(['report', ...args, '--json', '--timezone', 'UTC', '--store', store], { PATH: process.env.PATH, HOME: home, CCOTEL_CONFIG: 'none', CCOTEL_STATE_DIR: join(home, 'state') }, 180_000);
  if (result.status !== 0) throw new Error(`report ${args.join(' ')} --store ${store}: ${result.stderr}`);
  return JSON.parse(result.stdout);
}

/** What a deployment's insights timer does (`ccotel retention --insights-only`): the insight slots from the facts. */
async function refreshInsights(store: string, home: string): Promise<void> {
  const result = await runCli(['retention', '--insights-only', '--store', store], { PATH: process.env.PATH, HOME: home, CCOTEL_CONFIG: 'none', CCOTEL_STATE_DIR: join(home, 'state') }, 180_000);
  if (result.status !== 0) throw new Error(`retention --insights-only --store ${store}: ${result.stderr}`);
}

export interface FleetRun {
  fleet: LocalFleet;
  fleetClient: ClickHouseClient;
  /** The union of the hosts' stores (an embedded store). */
  referenceDir: string;
  /** `report <period> --json` of the fleet's store and of the reference, by period. */
  reports: Map<string, { fleet: unknown; reference: unknown }>;
  /** The time of the oldest record (the history older than the raw TTL). */
  corpusStartMs: number;
  /** Log record, metric point and span fact ids the hosts' stores hold that never reached the fleet's store, with what each is. */
  missing: Map<string, string>;
  /** Span (otel_traces), log record and metric point ids the hosts' stores hold that never reached the fleet's store. */
  missingDetail: Map<string, string>;
  close(): Promise<void>;
}

export async function runFleet(faults: boolean): Promise<FleetRun> {
  assertBuilt();
  const dir = mkdtempSync(join(tmpdir(), 'ccotel-fleet-'));
  try {
    return await run(dir, faults);
  } catch (error) {
    // A process of the fleet may still be writing there; the error that stopped the run is the one to see.
    try {
      rmSync(dir, { recursive: true, force: true, maxRetries: 3 });
    } catch (cleanup) {
      console.error(`could not remove ${dir}: ${(cleanup as Error).message}`);
    }
    throw error;
  }
}

async function run(dir: string, faults: boolean): Promise<FleetRun> {
  // Within the shipped schema's 30-day raw TTL.
  await generateCorpus({ seed: 32, root: join(dir, 'corpus'), hostLayout: 'single-root', sessions: 9, startMs: Date.now() - 3 * DAY_MS });
  // And one project's history older than the raw TTL, on host-1: through a gateway (and in the hosts' own stores) its
  // raw rows are dropped as they are inserted, while the views keep its facts, which the figures count.
  const historyStartMs = Date.now() - HISTORY_DAYS * DAY_MS;
  await generateCorpus({ seed: 33, root: join(dir, 'history'), hostLayout: 'single-root', startMs: historyStartMs });
  const [oldProject] = readdirSync(join(dir, 'history', 'projects')).sort();
  const history = splitCorpus(join(dir, 'history', 'projects')).filter((file) => file.relativePath.startsWith(`${oldProject}/`));
  const files = [...splitCorpus(join(dir, 'corpus', 'projects')), ...history.map((file) => ({ ...file, host: 0 }))];
  const fleet = new LocalFleet({ dir: join(dir, 'fleet'), hosts: HOSTS, runArgs: ['--idle', '2000'], hostStores: true });
  process.once('exit', () => rmSync(dir, { recursive: true, force: true }));
  await fleet.start();

  const append = (step: number) => {
    for (const file of files) {
      const path = join(fleet.hosts[file.host]!.projects, file.relativePath);
      mkdirSync(dirname(path), { recursive: true });
      const from = Math.floor(((step - 1) * file.lines.length) / STEPS);
      appendFileSync(path, file.lines.slice(from, Math.floor((step * file.lines.length) / STEPS)).join(''));
    }
  };
  const [gateway1] = fleet.gateways;
  append(1);
  await pause(QUIET_MS);
  if (faults) await gateway1!.stop('SIGKILL'); // a crash; the next slice is sent while it is down
  append(2);
  await pause(5_000);
  if (faults) await gateway1!.start();
  append(3);
  await pause(QUIET_MS);
  if (faults) await fleet.front!.stop('SIGKILL');
  append(4);
  if (faults) await pause(OUTAGE_MS);
  if (faults) await fleet.front!.start();
  if (faults) await fleet.hosts[1]!.stop();
  append(5);
  await pause(2_000);
  if (faults) fleet.hosts[1]!.start();
  append(6);

  // Wait until the fleet's store has every id the hosts' stores hold (the exporter retries at most every 30 s): with
  // faults, of what the figures count (a whole trace a killed gateway held undecided loses its detail, not its facts).
  const fleetClient = createClient({ url: fleet.storeUrl, request_timeout: 120_000 });
  const hostIds = async (sql: string) => {
    const all = new Map<string, string>();
    for (const host of fleet.hosts) {
      for (const line of (await query(dir, sql, host.store)).split('\n').filter(Boolean)) {
        const row = JSON.parse(line) as { id: string; what: string };
        all.set(row.id, row.what);
      }
    }
    return all;
  };
  const missingFrom = async (sql: string) => {
    const [expected, stored] = [await hostIds(sql), await ids(fleetClient, sql)];
    return expected.size === 0 ? undefined : new Map([...expected].filter(([id]) => !stored.has(id)));
  };
  const awaited = faults ? [FIGURE_IDS_SQL] : [FIGURE_IDS_SQL, IDS_SQL];
  const deadline = Date.now() + 240_000;
  for (;;) {
    await pause(5_000);
    // A sidecar just started again answers queries once it has opened its store.
    const missing = await Promise.all(awaited.map(missingFrom)).catch(() => undefined);
    if (missing?.every((ids) => ids?.size === 0) || Date.now() > deadline) break;
  }
  await pause(QUIET_MS); // what is still on its way (e.g. a repeat, a kept trace's detail) lands before the figures are read
  const [missing, missingDetail] = [(await missingFrom(FIGURE_IDS_SQL)) ?? new Map<string, string>(), (await missingFrom(IDS_SQL)) ?? new Map<string, string>()];
  await fleet.stop();
  await fleet.front!.start(); // the fleet's store, to read

  // The union of the hosts' stores: their raw rows into one embedded store (its views fill the summaries), and their
  // facts, which hold the history their raw TTL dropped.
  const referenceDir = join(dir, 'reference');
  const exported = new Map<string, string[]>();
  for (const table of [...RAW_TABLES, USAGE_TABLES.spans, USAGE_TABLES.events]) exported.set(table, (await Promise.all(fleet.hosts.map((host) => query(dir, `SELECT * FROM ${table}`, host.store)))).flatMap((text) => text.split('\n').filter(Boolean)));
  const union = await openStore(referenceDir, { command: 'test', access: 'write' });
  for (const [table, lines] of exported) if (lines.length > 0) await union.client.insert({ table, values: lines.map((line) => JSON.parse(line) as object), format: 'JSONEachRow' });
  await union.close();
  for (const store of [fleet.storeUrl, referenceDir]) await refreshInsights(store, join(dir, 'reader'));
  const reports = new Map<string, { fleet: unknown; reference: unknown }>();
  for (const period of PERIODS) {
    reports.set(period.join(' ') || 'overview', {
      fleet: await report(period, fleet.storeUrl, join(dir, 'reader')),
      reference: await report(period, referenceDir, join(dir, 'reader')),
    });
  }
  return {
    fleet,
    fleetClient,
    referenceDir,
    reports,
    corpusStartMs: historyStartMs,
    missing,
    missingDetail,
    async close() {
      await fleetClient.close();
      await fleet.stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
