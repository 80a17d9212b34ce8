/**
 * Grafana alerting provisioning (dashboards/alerts/grafana/ccotel-alerts.yaml) for the ClickHouse plugin:
 * one rule per Sigma rule worth alerting on (detection SQL converted from the Sigma file, so the two cannot
 * disagree), plus the sidecar-down and sidecar-lagging rules that Sigma cannot express (an absence, a gauge).
 * Each rule: query A (ClickHouse) → reduce B (last) → threshold C.
 */
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { CLICKHOUSE_PLUGIN } from '../../src/clickhouse-query.js';
import { detectionSql, logColumn, parseSigma, type CorrelationRule, type DetectionRule, type SigmaRule } from './sigma.js';

/** Provisioning reads the datasource uid from this environment variable. */
export const DATASOURCE_UID_ENV = 'CCOTEL_CLICKHOUSE_UID';

export interface AlertQuery {
  uid: string;
  title: string;
  rawSql: string;
  /** Seconds of history each evaluation reads. */
  rangeSeconds: number;
  /** Fires when the query's value is greater than this. */
  above: number;
  severity: string;
  summary: string;
}

export function loadSigmaRules(dir: string): SigmaRule[] {
  return readdirSync(dir).filter((f) => f.endsWith('.yml')).sort().map((f) => parseSigma(readFileSync(join(dir, f), 'utf8')));
}

const matchingLogs = (where: string) =>
  `SELECT * FROM otel_logs WHERE toStartOfFiveMinutes(Timestamp) >= toStartOfFiveMinutes($__fromTime) ` +
  `AND $__timeFilter(Timestamp) AND ${where} LIMIT 1 BY LogAttributes['ccotel.record.id']`;

function detectionAlert(rule: DetectionRule): AlertQuery {
  return {
    uid: rule.id, title: rule.title, severity: rule.level, summary: rule.title,
    rawSql: `SELECT count() AS matches FROM (${matchingLogs(detectionSql(rule))})`,
    rangeSeconds: 300, above: 0,
  };
}

function correlationAlert(rule: CorrelationRule, byName: Map<string, SigmaRule>): AlertQuery {
  const where = rule.rules.map((name) => {
    const base = byName.get(name);
    if (base?.kind !== 'detection') throw new Error(`${rule.name}: ${name} is not a detection rule`);
    return detectionSql(base);
  }).join(' OR ');
  const groups = rule.groupBy.map(logColumn).join(', ');
  return {
    uid: rule.id, title: rule.title, severity: rule.level, summary: rule.title,
    rawSql: `SELECT max(events) AS events FROM (SELECT ${groups}, count() AS events FROM (${matchingLogs(where)}) GROUP BY ${groups})`,
    rangeSeconds: rule.timespanSeconds, above: rule.gte - 1,
  };
}

/** A sidecar reports `ccotel.sidecar.lag` every minute; a host that did within the day but not in 15 minutes is down. */
export const SIDECAR_DOWN: AlertQuery = {
  uid: 'ccotel-sidecar-down', title: 'ccotel sidecar down', severity: 'high',
  summary: 'A host stopped reporting sidecar metrics for 15 minutes',
  rawSql: `SELECT count() AS silent_hosts FROM (
  SELECT ResourceAttributes['host.name'] AS host, max(TimeUnix) AS last_report FROM otel_metrics_gauge
  WHERE $__timeFilter(TimeUnix) AND MetricName = 'ccotel.sidecar.lag'
  GROUP BY host HAVING last_report < $__toTime - INTERVAL 15 MINUTE)`,
  rangeSeconds: 86_400, above: 0,
};

/** Lag (bytes not yet read) that stayed above 10 MiB for the whole last 10 minutes on some host. */
export const SIDECAR_LAGGING: AlertQuery = {
  uid: 'ccotel-sidecar-lagging', title: 'ccotel sidecar lagging', severity: 'medium',
  summary: 'A sidecar has been more than 10 MiB behind its inputs for 10 minutes',
  rawSql: `SELECT max(least_lag) AS lag_bytes FROM (
  SELECT ResourceAttributes['host.name'] AS host, min(Value) AS least_lag FROM otel_metrics_gauge
  WHERE $__timeFilter(TimeUnix) AND MetricName = 'ccotel.sidecar.lag' GROUP BY host)`,
  rangeSeconds: 600, above: 10 * 1024 * 1024,
};

export function alertQueries(rules: SigmaRule[]): AlertQuery[] {
  const byName = new Map(rules.map((r) => [r.name, r]));
  const alerts = rules
    .filter((r) => r.level !== 'informational')
    .map((r) => (r.kind === 'detection' ? detectionAlert(r) : correlationAlert(r, byName)));
  return [...alerts, SIDECAR_DOWN, SIDECAR_LAGGING];
}

/** Grafana expands $VAR in provisioning files; `$$` keeps a literal `$` (the plugin's macros). */
export const escapeProvisioning = (text: string) => text.replaceAll('$', '$$$$');
export const unescapeProvisioning = (text: string) => text.replaceAll('$$', '$');

export function provisioningYaml(alerts: AlertQuery[]): string {
  const datasourceUid = `\${${DATASOURCE_UID_ENV}}`;
  const rules = alerts.map((a) => ({
    uid: a.uid,
    title: a.title,
    condition: 'C',
    data: [
      {
        refId: 'A', relativeTimeRange: { from: a.rangeSeconds, to: 0 }, datasourceUid,
        model: { refId: 'A', datasource: { type: CLICKHOUSE_PLUGIN, uid: datasourceUid }, editorType: 'sql',
          queryType: 'table', format: 1, rawSql: escapeProvisioning(a.rawSql) },
      },
      { refId: 'B', datasourceUid: '__expr__', model: { refId: 'B', type: 'reduce', expression: 'A', reducer: 'last' } },
      { refId: 'C', datasourceUid: '__expr__',
        model: { refId: 'C', type: 'threshold', expression: 'B', conditions: [{ evaluator: { type: 'gt', params: [a.above] } }] } },
    ],
    noDataState: 'OK',
    execErrState: 'Error',
    for: '0s',
    annotations: { summary: a.summary },
    labels: { severity: a.severity, source: 'ccotel' },
  }));
  const header =
    `# Generated by \`npm run dashboards\` from dashboards/alerts/sigma/*.yml and dashboards/alerts/src/grafana-alerts.ts.\n` +
    `# Set ${DATASOURCE_UID_ENV} to the uid of the grafana-clickhouse-datasource; \`$$\` is a literal \`$\` for Grafana.\n`;
  return header + stringify({ apiVersion: 1, groups: [{ orgId: 1, name: 'ccotel', folder: 'ccotel', interval: '1m', rules }] }, { lineWidth: 0 });
}
