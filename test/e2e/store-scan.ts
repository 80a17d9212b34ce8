// What reached the store, read back whole: the rows ccotel wrote (one per id, however often it was
// written) and every stored string of every table, for scans that must find nothing.
import type { ClickHouseClient } from '@clickhouse/client';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

export interface StoredSpan {
  name: string;
  spanId: string;
  parentSpanId: string;
  attributes: Record<string, string>;
  eventNames: string[];
}

export interface StoredLog {
  eventName: string;
  spanId: string;
  attributes: Record<string, string>;
}

async function rows<T>(client: ClickHouseClient, query: string): Promise<T[]> {
  return (await client.query({ query, format: 'JSONEachRow' })).json<T>();
}

/** Every span once, in time order. */
export function storedSpans(client: ClickHouseClient): Promise<StoredSpan[]> {
  return rows<StoredSpan>(
    client,
    `SELECT SpanName AS name, SpanId AS spanId, ParentSpanId AS parentSpanId, SpanAttributes AS attributes, Events.Name AS eventNames
     FROM otel_traces ORDER BY Timestamp, SpanId LIMIT 1 BY SpanId`,
  );
}

/** Every log record once (by its deterministic record id), in time order. */
export function storedLogs(client: ClickHouseClient): Promise<StoredLog[]> {
  return rows<StoredLog>(
    client,
    `SELECT EventName AS eventName, SpanId AS spanId, LogAttributes AS attributes FROM otel_logs
     ORDER BY Timestamp LIMIT 1 BY LogAttributes['ccotel.record.id']`,
  );
}

/**
 * Every row of every table of the store as raw text (TabSeparatedRaw: strings unescaped, so a secret
 * cannot hide behind JSON escaping). Views are skipped: their rows are in the tables already.
 */
export async function storeText(client: ClickHouseClient): Promise<string> {
  const tables = await rows<{ name: string }>(
    client,
    `SELECT name FROM system.tables WHERE database = currentDatabase() AND engine NOT LIKE '%View%' ORDER BY name`,
  );
  if (tables.length === 0) throw new Error('the store has no tables: a scan of it would prove nothing');
  const parts: string[] = [];
  for (const { name } of tables) {
    parts.push(await (await client.query({ query: `SELECT * FROM \`${name}\``, format: 'TabSeparatedRaw' })).text());
  }
  return parts.join('\n');
}

/** Row types (or attachment types) that copy whole prompts or API requests, not conversation. */
const FULL_PROMPT_ROWS = new Set(['attachment/prompt_snapshot', 'api-request-shape', 'api-request-blob', 'api-request']);

function rowKind(row: Record<string, unknown>): string {
  const attachment = row.attachment as { type?: unknown } | undefined;
  return row.type === 'attachment' && typeof attachment?.type === 'string' ? `attachment/${attachment.type}` : String(row.type);
}

function stringLeaves(value: unknown, out: string[]): string[] {
  if (typeof value === 'string') out.push(value);
  else if (Array.isArray(value)) for (const item of value) stringLeaves(item, out);
  else if (typeof value === 'object' && value !== null) for (const item of Object.values(value)) stringLeaves(item, out);
  return out;
}

const linesOf = (texts: string[]) => texts.flatMap((text) => text.split('\n')).map((line) => line.trim());

/**
 * Lines (40+ characters) found only in full-prompt rows of the transcripts under `projectsDir`: system
 * prompt, tool descriptions, reminders. Lines that some other row also holds (the user's prompt, tool
 * output) are left out: those may reach the store through the conversation, masked and capped.
 */
export function fullPromptOnlyLines(projectsDir: string): string[] {
  const fullPrompt = new Set<string>();
  const elsewhere = new Set<string>();
  const files = readdirSync(projectsDir, { recursive: true, encoding: 'utf8' }).filter((f) => f.endsWith('.jsonl'));
  for (const file of files) {
    for (const line of readFileSync(join(projectsDir, file), 'utf8').split('\n')) {
      if (!line) continue;
      const row = JSON.parse(line) as Record<string, unknown>;
      const target = FULL_PROMPT_ROWS.has(rowKind(row)) ? fullPrompt : elsewhere;
      for (const text of linesOf(stringLeaves(row, []))) target.add(text);
    }
  }
  return [...fullPrompt].filter((line) => line.length >= 40 && !elsewhere.has(line));
}
