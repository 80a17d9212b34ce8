// Writes telemetry into the exporter-compatible otel_* tables, embedded (chdb) or on a ClickHouse server:
// the same client code for both. Rows whose id is already stored are dropped before the insert, so a
// re-read after a crash or a second backfill adds nothing (ids are deterministic, timestamps come from
// the records, so a repeat has the same id and the same time).
import type { ClickHouseClient } from '@clickhouse/client';
import { OTEL_TABLES, rawWindowStartMs } from '../../../schemas/clickhouse.js';
import { USAGE_TABLES } from '../../../schemas/usage.js';
import type { LogRecord, MetricPoint, Sink, SpanRecord, TelemetryBatch } from '../model.js';
import { POINT_ID_KEY, RECORD_ID_KEY } from '../semconv.js';
import type { StoreWriter } from '../store/open-store.js';
import { ByteWriter } from './byte-writer.js';
import { clickhouseTime, GAUGE_COLUMNS, HISTOGRAM_COLUMNS, LOG_COLUMNS, pointRows, RECEIVED_SPAN_COLUMNS, RowMapper, SPAN_COLUMNS, SUM_COLUMNS, withLinks } from './clickhouse-rows.js';
import { IdSet } from '../id-set.js';
import { valueWriter, writeRow, type ValueWriter } from './row-binary.js';

/** Ids remembered in memory instead of asked from the store (about 40 MB at the bound, id-set.ts). */
const MAX_OWN_IDS = 1_000_000;
/** RowBinary bytes per INSERT: large enough for the engine to insert fast, small enough to bound memory. */
const INSERT_BYTES = 8 << 20;
/** Room past INSERT_BYTES for the row that crosses it (most rows are a few kB; a larger one grows the buffer). */
const ROW_ROOM_BYTES = 1 << 20;
/** Ids per existence query: keeps the query (and, on a server, its URL) small. */
const IDS_PER_QUERY = 2000;

interface IdLookup {
  table: string;
  /** Set when a row holds several ids (a metric row's points are its exemplars): the ids are this array's. */
  arrayJoin?: string;
  idExpression: string;
  timeColumn: string;
}

const SPAN_IDS: IdLookup = { table: OTEL_TABLES.traces, idExpression: 'SpanId', timeColumn: 'Timestamp' };
const LOG_IDS: IdLookup = { table: OTEL_TABLES.logs, idExpression: `LogAttributes['${RECORD_ID_KEY}']`, timeColumn: 'Timestamp' };
const metricIds = (table: string): IdLookup => ({
  table,
  arrayJoin: 'Exemplars.FilteredAttributes AS exemplar',
  idExpression: `exemplar['${POINT_ID_KEY}']`,
  timeColumn: 'TimeUnix',
});

export interface ClickHouseSinkStats {
  /** Rows handed to the store: spans and log records past the raw window among them (to their facts only). */
  inserted: { spans: number; logs: number; metrics: number };
  repeatsDropped: number;
  /** Spans and log records past the raw window (their facts kept, not their rows), metric points past it (not kept). */
  pastRawWindow: number;
}

export interface ClickHouseSinkOptions {
  /** The sink is the store's only writer (an embedded store: its lock). */
  singleWriter?: boolean;
  /**
   * Days the raw tables keep (0: all). A row older goes to its facts' Null feed instead (schemas/usage.ts), and a
   * metric point older is not written: the TTL would drop either at the next merge. Only where the store's TTL is
   * the sink's own setting (an embedded store); a server's is its retention job's.
   */
  rawWindowDays?: number;
}

export class ClickHouseSink implements Sink {
  readonly name = 'clickhouse';
  readonly stats: ClickHouseSinkStats = { inserted: { spans: 0, logs: 0, metrics: 0 }, repeatsDropped: 0, pastRawWindow: 0 };

  /**
   * Set when this sink is the only writer (an embedded store: its lock) and the store was empty when it began:
   * then nothing stored can repeat an id but what this sink wrote, so the ids it wrote are checked in memory
   * instead of asking the store for every batch. Dropped past a bound, falling back to the store.
   */
  private ownIds?: IdSet;
  private started = false;

  /** Asks which ids are stored, and the tables' column types: the first writer's client. */
  private readonly client: ClickHouseClient;
  /** Each table's writers of the columns inserted, by table and column list. */
  private readonly columnWriters = new Map<string, Promise<ValueWriter[]>>();
  /**
   * The RowBinary buffer of each store writer, written again by each of its inserts (a writer takes one at a time):
   * sized for a whole insert, so it neither grows by doubling nor leaves a new buffer per insert to the collector.
   */
  private readonly rowBuffers = new Map<StoreWriter, ByteWriter>();

  /**
   * `writers` each take one insert at a time (the store's `writers`): the tables are inserted in two lanes at once,
   * each on its own writer, so an engine that writes one part per query uses both cores.
   */
  constructor(
    private readonly writers: StoreWriter[],
    private readonly mapper: RowMapper,
    private readonly database: string,
    private readonly options: ClickHouseSinkOptions = {},
  ) {
    this.client = writers[0].client;
  }

  async write(batch: TelemetryBatch): Promise<void> {
    if (!this.started) {
      this.started = true;
      if (this.options.singleWriter && (await this.storeIsEmpty())) this.ownIds = new IdSet();
    }
    const windowStartMs = rawWindowStartMs(this.options.rawWindowDays ?? 0, Date.now());
    const [spans, pastSpans] = split(await this.fresh(batch.spans, (span) => span.spanId, (span) => span.startMs, SPAN_IDS), (span) => span.startMs >= windowStartMs);
    const [logs, pastLogs] = split(await this.fresh(batch.logs, (log) => log.id, (log) => log.timeMs, LOG_IDS), (log) => log.timeMs >= windowStartMs);
    const [metrics, pastMetrics] = split(batch.metrics, (point) => point.timeMs >= windowStartMs);
    this.stats.pastRawWindow += pastSpans.length + pastLogs.length + pastMetrics.length;
    const own = metrics.filter((point) => !point.origin);
    const newSums = await this.fresh(own.filter((point) => point.kind === 'sum'), (point) => point.id, bucketEndMs, metricIds(OTEL_TABLES.sum));
    const newHistograms = await this.fresh(own.filter((point) => point.kind === 'histogram'), (point) => point.id, bucketEndMs, metricIds(OTEL_TABLES.histogram));
    // Received points: a row each, at their own time.
    const received = async (kind: MetricPoint['kind'], table: string) =>
      this.fresh(metrics.filter((point) => point.origin && point.kind === kind), (point) => point.id, (point) => point.timeMs, metricIds(table));
    const [receivedSums, receivedGauges, receivedHistograms] = [await received('sum', OTEL_TABLES.sum), await received('gauge', OTEL_TABLES.gauge), await received('histogram', OTEL_TABLES.histogram)];
    const pointInsert = (table: string, columns: readonly string[], points: MetricPoint[]) => (writer: StoreWriter) =>
      this.insert(writer, { table, columns, items: points, valuesOf: (point) => this.mapper.receivedPoint(point), idsOf: (point) => [point.id] });
    const spanInserts = (table: string, items: SpanRecord[]) => [
      (writer: StoreWriter) => this.insert(writer, { table, columns: SPAN_COLUMNS, items: items.filter((span) => !withLinks(span)), valuesOf: (span) => this.mapper.span(span), idsOf: (span) => [span.spanId] }),
      (writer: StoreWriter) => this.insert(writer, { table, columns: RECEIVED_SPAN_COLUMNS, items: items.filter(withLinks), valuesOf: (span) => this.mapper.span(span), idsOf: (span) => [span.spanId] }),
    ];
    const logInsert = (table: string, items: LogRecord[]) => (writer: StoreWriter) =>
      this.insert(writer, { table, columns: LOG_COLUMNS, items, valuesOf: (log) => this.mapper.log(log), idsOf: (log) => [log.id] });
    // Two lanes of about the same JSON size; both are waited for even when one fails, so a retry of the batch never
    // overlaps an insert still running (its rows would not be remembered yet, and would be stored twice).
    const lanes: ((writer: StoreWriter) => Promise<void>)[][] = [
      [
        ...spanInserts(OTEL_TABLES.traces, spans),
        ...spanInserts(USAGE_TABLES.spanFeed, pastSpans),
        logInsert(OTEL_TABLES.logs, logs),
        logInsert(USAGE_TABLES.eventFeed, pastLogs),
      ],
      [
        (writer) => this.insert(writer, { table: OTEL_TABLES.sum, columns: SUM_COLUMNS, items: pointRows(newSums), valuesOf: (points) => this.mapper.sum(points), idsOf: pointIds }),
        (writer) => this.insert(writer, { table: OTEL_TABLES.histogram, columns: HISTOGRAM_COLUMNS, items: pointRows(newHistograms), valuesOf: (points) => this.mapper.histogram(points), idsOf: pointIds }),
        pointInsert(OTEL_TABLES.sum, SUM_COLUMNS, receivedSums),
        pointInsert(OTEL_TABLES.gauge, GAUGE_COLUMNS, receivedGauges),
        pointInsert(OTEL_TABLES.histogram, HISTOGRAM_COLUMNS, receivedHistograms),
      ],
    ];
    const done = await Promise.allSettled(
      lanes.map(async (inserts, lane) => {
        for (const insert of inserts) await insert(this.writers[lane % this.writers.length]);
      }),
    );
    const failed = done.find((lane) => lane.status === 'rejected');
    if (failed) throw failed.reason;
    this.stats.inserted.spans += spans.length + pastSpans.length;
    this.stats.inserted.logs += logs.length + pastLogs.length;
    this.stats.inserted.metrics += newSums.length + newHistograms.length + receivedSums.length + receivedGauges.length + receivedHistograms.length;
  }

  private async storeIsEmpty(): Promise<boolean> {
    const tables = [SPAN_IDS, LOG_IDS, metricIds(OTEL_TABLES.sum), metricIds(OTEL_TABLES.histogram), metricIds(OTEL_TABLES.gauge)].map((lookup) => `${this.database}.${lookup.table}`);
    const result = await this.client.query({
      query: tables.map((table) => `SELECT count() AS n FROM ${table}`).join(' UNION ALL '),
      format: 'JSONEachRow',
    });
    return (await result.json<{ n: number | string }>()).every((row) => Number(row.n) === 0);
  }

  /** Called once per stored row; the count is checked first, so that past the bound nothing is added. */
  private remember(id: string): void {
    if (!this.ownIds) return;
    if (this.ownIds.size >= MAX_OWN_IDS) {
      this.ownIds = undefined; // from here on the store answers, as for any other store
      return;
    }
    this.ownIds.add(id);
  }

  async close(): Promise<void> {
    // The client belongs to the store that opened it.
  }

  /**
   * Rows go in the writer's format: RowBinary into the embedded engine (row-binary.ts: each column's binary form, which
   * it copies with next to no parsing), JSONCompactEachRow to a server. Rows are encoded and inserted INSERT_BYTES at a
   * time, so a batch never exists as rows or bytes all at once. The ids of each part are remembered once it is stored:
   * a batch retried after a failure repeats none of it.
   */
  private async insert<T>(writer: StoreWriter, rows: TableInsert<T>): Promise<void> {
    const { items } = rows;
    if (items.length === 0) return;
    const into = `${this.database}.${rows.table} (${rows.columns.map((column) => `\`${column}\``).join(', ')})`;
    const encoded = writer.format === 'RowBinary' ? new BinaryRows(this.rowBufferOf(writer), await this.writersOf(rows.table, rows.columns)) : new JsonRows();
    let from = 0;
    for (let to = 0; to < items.length; ) {
      encoded.add(rows.valuesOf(items[to++]));
      if (encoded.size() < INSERT_BYTES && to < items.length) continue;
      await writer.insertRows(into, encoded.take());
      for (let i = from; i < to; i++) for (const id of rows.idsOf(items[i])) this.remember(id);
      from = to;
    }
  }

  private rowBufferOf(writer: StoreWriter): ByteWriter {
    let buffer = this.rowBuffers.get(writer);
    if (!buffer) this.rowBuffers.set(writer, (buffer = new ByteWriter(INSERT_BYTES + ROW_ROOM_BYTES)));
    return buffer;
  }

  /** Writers of a table's columns, from their types in the store (asked once). */
  private writersOf(table: string, columns: readonly string[]): Promise<ValueWriter[]> {
    const key = `${table} ${columns.join(',')}`;
    let writers = this.columnWriters.get(key);
    if (!writers) {
      writers = (async () => {
        const result = await this.client.query({
          query: 'SELECT name, type FROM system.columns WHERE database = {database:String} AND table = {table:String}',
          query_params: { database: this.database, table },
          format: 'JSONEachRow',
        });
        const types = new Map((await result.json<{ name: string; type: string }>()).map((column) => [column.name, column.type]));
        return columns.map((column) => {
          const type = types.get(column);
          if (type === undefined) throw new Error(`the store's table ${this.database}.${table} has no column ${column}`);
          return valueWriter(type);
        });
      })();
      writers.catch(() => this.columnWriters.delete(key)); // asked again on the next write
      this.columnWriters.set(key, writers);
    }
    return writers;
  }

  /** The items of `items` whose id is neither repeated earlier in the batch nor already stored. */
  private async fresh<T>(items: T[], idOf: (item: T) => string, timeOf: (item: T) => number, lookup: IdLookup): Promise<T[]> {
    const unique = new Map<string, T>();
    for (const item of items) if (!unique.has(idOf(item))) unique.set(idOf(item), item);
    const stored = await this.storedIds([...unique.values()], idOf, timeOf, lookup);
    const result = [...unique.values()].filter((item) => !stored.has(idOf(item)));
    this.stats.repeatsDropped += items.length - result.length;
    return result;
  }

  private async storedIds<T>(items: T[], idOf: (item: T) => string, timeOf: (item: T) => number, lookup: IdLookup): Promise<Set<string>> {
    const own = this.ownIds;
    if (own) return new Set(items.map(idOf).filter((id) => own.has(id)));
    const stored = new Set<string>();
    for (let i = 0; i < items.length; i += IDS_PER_QUERY) {
      const chunk = items.slice(i, i + IDS_PER_QUERY);
      const times = chunk.map(timeOf);
      const result = await this.client.query({
        query: `SELECT DISTINCT ${lookup.idExpression} AS id FROM ${this.database}.${lookup.table} ${lookup.arrayJoin ? `ARRAY JOIN ${lookup.arrayJoin}` : ''}
                WHERE ${lookup.timeColumn} >= {from:DateTime64(9)} AND ${lookup.timeColumn} <= {to:DateTime64(9)}
                  AND ${lookup.idExpression} IN {ids:Array(String)}`,
        query_params: {
          from: clickhouseTime(Math.min(...times) - 1000),
          to: clickhouseTime(Math.max(...times) + 1000),
          ids: chunk.map(idOf),
        },
        format: 'JSONEachRow',
      });
      for (const row of await result.json<{ id: string }>()) stored.add(row.id);
    }
    return stored;
  }
}

/** Rows as RowBinary, in the writer's buffer (written again once the engine has taken its bytes). */
class BinaryRows {
  constructor(
    private readonly bytes: ByteWriter,
    private readonly columns: ValueWriter[],
  ) {
    bytes.pos = 0;
  }

  add(values: unknown[]): void {
    writeRow(this.bytes, this.columns, values);
  }

  size(): number {
    return this.bytes.pos;
  }

  /** The rows so far; valid until the next add (the insert is awaited before it). */
  take(): Uint8Array {
    const rows = this.bytes.finish();
    this.bytes.pos = 0;
    return rows;
  }
}

/** Rows as JSONCompactEachRow text: a JSON array of values a line (a StoreTime as its text). */
class JsonRows {
  private text = '';

  add(values: unknown[]): void {
    this.text += `${JSON.stringify(values)}\n`;
  }

  size(): number {
    return this.text.length;
  }

  take(): string {
    const rows = this.text;
    this.text = '';
    return rows;
  }
}

interface TableInsert<T> {
  table: string;
  /** The columns each row's values fill, in order (clickhouse-rows.ts). */
  columns: readonly string[];
  items: T[];
  valuesOf: (item: T) => unknown[];
  /** The ids a row stores (a metric row: its points'). */
  idsOf: (item: T) => readonly string[];
}

const pointIds = (points: MetricPoint[]): string[] => points.map((point) => point.id);

/** The items that pass, and those that do not. */
function split<T>(items: T[], passes: (item: T) => boolean): [T[], T[]] {
  const [yes, no]: [T[], T[]] = [[], []];
  for (const item of items) (passes(item) ? yes : no).push(item);
  return [yes, no];
}

function bucketEndMs(point: MetricPoint): number {
  return Math.floor(point.timeMs / 60_000) * 60_000 + 60_000;
}
