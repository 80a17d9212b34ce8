// `ccotel report settings`: the audit trail of Claude Code's settings (issue 37): every change of a settings file,
// and for one session the rules in force at its turns and the changes made while it ran. Detail from the raw
// records (kept raw_ttl_days), not a figure of the summaries.
import type { ClickHouseClient } from '@clickhouse/client';
import { selectRows as rows } from './select.js';
import { uniqueLogs } from './queries.js';

export interface SettingsChangeRow {
  time_ms: number;
  scope: string;
  file: string;
  /** One line per change (masked). */
  changes: string;
  first_seen: boolean;
  loosens: boolean;
  sessions: string[];
  /** The session whose ConfigChange hook told the change, '' if none. */
  told_by: string;
  commit: string;
}

export interface RulesRow {
  time_ms: number;
  fingerprint: string;
  /** The merged rules (settings-view.ts's view), as JSON text. */
  rules: string;
  /** `<scope> <path> <file fingerprint>` per file in force. */
  files: string;
}

export interface SettingsReport {
  session?: string;
  changes: SettingsChangeRow[];
  /** The rules in force at the session's turns, each fingerprint once (with a session only). */
  rules: RulesRow[];
}

export interface SettingsFilter {
  session?: string;
  /** Days (YYYY-MM-DD, inclusive) in `timezone`. */
  since?: string;
  until?: string;
  timezone: string;
}

const CHANGES = `SELECT toUnixTimestamp64Milli(Timestamp) AS time_ms, LogAttributes['ccotel.settings.scope'] AS scope,
    LogAttributes['ccotel.settings.file'] AS file, Body AS changes, LogAttributes['ccotel.settings.first_seen'] = 'true' AS first_seen,
    SeverityText = 'WARN' AS loosens, splitByChar('\\n', LogAttributes['ccotel.settings.sessions']) AS sessions,
    LogAttributes['session.id'] AS told_by, LogAttributes['ccotel.settings.git.commit'] AS commit
  FROM ${uniqueLogs(`EventName = 'ccotel.settings.changed'
    AND ({session:String} = '' OR has(splitByChar('\\n', LogAttributes['ccotel.settings.sessions']), {session:String}) OR LogAttributes['session.id'] = {session:String})
    AND ({since:String} = '' OR toDate(Timestamp, {timezone:String}) >= toDateOrZero({since:String}))
    AND ({until:String} = '' OR toDate(Timestamp, {timezone:String}) <= toDateOrZero({until:String}))`)}
  ORDER BY time_ms, file`;

const RULES = `SELECT toUnixTimestamp64Milli(Timestamp) AS time_ms, LogAttributes['ccotel.settings.fingerprint'] AS fingerprint,
    LogAttributes['ccotel.settings.rules'] AS rules, LogAttributes['ccotel.settings.files'] AS files
  FROM ${uniqueLogs(`EventName = 'ccotel.settings.effective' AND LogAttributes['session.id'] = {session:String}`)}
  ORDER BY time_ms`;

export async function settingsReport(client: ClickHouseClient, filter: SettingsFilter): Promise<SettingsReport> {
  const session = filter.session ?? '';
  const params = { session, since: filter.since ?? '', until: filter.until ?? '', timezone: filter.timezone };
  const [changes, rules] = await Promise.all([
    rows<SettingsChangeRow>(client, CHANGES, params),
    session === '' ? Promise.resolve([]) : rows<RulesRow>(client, RULES, { session }),
  ]);
  const found = changes.map((row) => ({ ...row, first_seen: Boolean(row.first_seen), loosens: Boolean(row.loosens), sessions: row.sessions.filter(Boolean) }));
  return { ...(filter.session ? { session } : {}), changes: found, rules };
}
