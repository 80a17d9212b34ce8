// `ccotel report`'s overview: every section of REPORT_QUERIES read from the store, as the CLI prints it and the
// web view shows it.
import type { ClickHouseClient } from '@clickhouse/client';
import { REPORT_QUERIES, SHARED_QUERIES, type ReportRows, type ReportSection } from './queries.js';
import { selectRows } from './select.js';

export type Report = Record<ReportSection, Record<string, unknown>[]>;

/** Each query's rows, asked once however many sections (or other readers of the same answers) want them. */
export function sharedAnswers(client: ClickHouseClient): (sql: string) => Promise<ReportRows> {
  const answers = new Map<string, Promise<ReportRows>>();
  return (sql) => {
    if (!answers.has(sql)) answers.set(sql, selectRows<Record<string, unknown>>(client, sql));
    return answers.get(sql)!;
  };
}

/**
 * The sections in REPORT_QUERIES' order; their queries overlap (report/select.ts), a shared one asked once.
 * `answer`: the web view passes its own, to read the shared span groups' per-day rows too.
 */
export async function buildReport(client: ClickHouseClient, answer = sharedAnswers(client)): Promise<Report> {
  const sections = Object.entries(REPORT_QUERIES) as [ReportSection, (typeof REPORT_QUERIES)[ReportSection]][];
  const answers = await Promise.all(sections.map(([, query]) =>
    'sql' in query ? answer(query.sql) : answer(SHARED_QUERIES[query.shared]).then((rows) => query.pick(rows))));
  return Object.fromEntries(sections.map(([section], index) => [section, answers[index]])) as Report;
}
