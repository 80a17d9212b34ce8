// `ccotel report`'s overview: every section of REPORT_QUERIES read from the store, as the CLI prints it and the
// web view shows it.
import type { ClickHouseClient } from '@clickhouse/client';
import { REPORT_QUERIES, SHARED_QUERIES, type ReportRows, type ReportSection } from './queries.js';
import { selectRows } from './select.js';

export type Report = Record<ReportSection, Record<string, unknown>[]>;

/** The sections in REPORT_QUERIES' order; their queries overlap (report/select.ts), a shared one asked once. */
export async function buildReport(client: ClickHouseClient): Promise<Report> {
  const shared = new Map<string, Promise<ReportRows>>();
  const answer = (sql: string) => {
    if (!shared.has(sql)) shared.set(sql, selectRows<Record<string, unknown>>(client, sql));
    return shared.get(sql)!;
  };
  const sections = Object.entries(REPORT_QUERIES) as [ReportSection, (typeof REPORT_QUERIES)[ReportSection]][];
  const answers = await Promise.all(sections.map(([, query]) =>
    'sql' in query ? answer(query.sql) : answer(SHARED_QUERIES[query.shared]).then((rows) => query.pick(rows))));
  return Object.fromEntries(sections.map(([section], index) => [section, answers[index]])) as Report;
}
