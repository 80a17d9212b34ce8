// The figures both fleet tests compare (fleet.test.ts without faults, fleet-faults.test.ts with them): `report --json`
// of every period, every dashboard panel, every alert rule and the web view's pages on the fleet's store, each equal to
// what the union of the hosts' own embedded stores answers.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { ClickHouseClient } from '@clickhouse/client';
import { expect, it } from 'vitest';
import { alertQueries, loadSigmaRules } from '../../dashboards/alerts/src/grafana-alerts.js';
import { SIGMA_DIR } from '../../dashboards/alerts/src/alerts-file.js';
import { DASHBOARDS, INSIGHT_VARIABLES } from '../../dashboards/src/dashboards.js';
import { expandMacros } from '../../dashboards/src/macros.js';
import { ALL_VARIABLES } from '../../dashboards/src/sql.js';
import { UiData } from '../../sidecar/src/ui/data.js';
import { DASHBOARD_DIR, PERIODS, rows, type FleetRun } from './fleet-scenario.js';

/** Sums of fractions to 12 significant digits: each store adds its parts in its own order. */
function rounded(value: unknown): unknown {
  if (typeof value === 'number') return Number.isInteger(value) ? value : Number(value.toPrecision(12));
  if (Array.isArray(value)) return value.map(rounded);
  if (value && typeof value === 'object') return Object.fromEntries(Object.entries(value).map(([key, inner]) => [key, rounded(inner)]));
  return value;
}

/**
 * A panel's or rule's rows, rounded, in a fixed order: rows tied on the statement's ORDER BY (a panel ordered by time
 * has an outcome per row of the same hour) come in whatever order each store's parts give them.
 */
const figures = async (client: ClickHouseClient, query: string): Promise<unknown> =>
  (await rows(client, query)).map(rounded).sort((a, b) => JSON.stringify(a).localeCompare(JSON.stringify(b)));

/** The tests; `stores` gives the run and the reference's client once beforeAll made them. */
export function figureTests(stores: () => { run: FleetRun; reference: ClickHouseClient }): void {
  it('counts the history older than the raw TTL from the summaries: its raw rows dropped at insert, its facts kept', async () => {
    const { run, reference } = stores();
    const old = 'Timestamp < now() - INTERVAL 31 DAY';
    const counts = async (client: ClickHouseClient) =>
      rows<{ raw: number; facts: number }>(client, `SELECT (SELECT count() FROM otel_traces WHERE ${old}) AS raw, (SELECT count() FROM ccotel_span_facts FINAL WHERE ${old}) AS facts`);
    const [fleet] = await counts(run.fleetClient);
    expect(Number(fleet!.raw)).toBe(0);
    expect(Number(fleet!.facts)).toBeGreaterThan(10);
    expect(await counts(reference)).toEqual([fleet]);
  });

  it.each(PERIODS.map((period) => [period.join(' ') || 'overview']))('answers `report %s --json` as the hosts\' stores do: nothing counted twice', (period) => {
    const { fleet: fromFleet, reference: fromHosts } = stores().run.reports.get(period)!;
    expect(fromFleet).toEqual(fromHosts);
  });

  it('shows the same figures in every dashboard panel', async () => {
    const { run, reference } = stores();
    const range = { fromMs: run.corpusStartMs - 86_400_000, toMs: Date.now() + 3_600_000, intervalMs: 3_600_000 };
    let compared = 0;
    for (const name of Object.keys(DASHBOARDS)) {
      const dashboard = JSON.parse(readFileSync(join(DASHBOARD_DIR, `${name}.json`), 'utf8')) as { panels: { title: string; targets?: { rawSql: string }[] }[] };
      for (const panel of dashboard.panels) {
        const sql = panel.targets?.[0]?.rawSql;
        // The sidecars' own health (when each last wrote, its lag): a host's store also holds what its sidecar
        // recorded while the fleet was being stopped.
        if (!sql || name === 'sidecar-health' || /ccotel\.sidecar|otel_metrics_gauge/.test(sql)) continue;
        const query = expandMacros(sql, { ...range, variables: { session_id: '', ...ALL_VARIABLES, ...INSIGHT_VARIABLES } });
        expect(await figures(run.fleetClient, query), `${name} "${panel.title}"`).toEqual(await figures(reference, query));
        compared++;
      }
    }
    expect(compared).toBeGreaterThan(20);
  });

  it('evaluates every alert rule to the same value', async () => {
    const { run, reference } = stores();
    const range = { fromMs: run.corpusStartMs - 86_400_000, toMs: Date.now() + 3_600_000, intervalMs: 60_000 };
    for (const alert of alertQueries(loadSigmaRules(SIGMA_DIR))) {
      if (/otel_metrics_gauge/.test(alert.rawSql)) continue; // the sidecars' health, as above
      const query = expandMacros(alert.rawSql, range);
      expect(await figures(run.fleetClient, query), alert.title).toEqual(await figures(reference, query));
    }
  });

  it('shows the same figures in the web view: overview, sessions, insights, failures', async () => {
    const { run, reference } = stores();
    const [fleet, hosts] = [new UiData(run.fleetClient), new UiData(reference)];
    const range = { fromMs: run.corpusStartMs - 86_400_000, toMs: Date.now() + 3_600_000 };
    const sessions = await fleet.sessions(range);
    expect(sessions.length).toBeGreaterThan(5);
    expect(rounded(sessions)).toEqual(rounded(await hosts.sessions(range)));
    expect(rounded(await fleet.overview(range))).toEqual(rounded(await hosts.overview(range)));
    const insights = await fleet.insights(range);
    // Found in the slots the deployment's insights timer refreshed (fleet-scenario.ts), not an empty answer twice.
    expect(insights.insights.filter((insight) => insight.count > 0).length).toBeGreaterThan(0);
    expect(rounded(insights)).toEqual(rounded(await hosts.insights(range)));
    expect(rounded(await fleet.failures(range))).toEqual(rounded(await hosts.failures(range)));
  });
}
