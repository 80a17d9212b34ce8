// The fleet path without faults (the scenario: fleet-scenario.ts): three hosts, two gateways, the real clickhouse
// exporter. The fleet's store must hold every span, log record and metric point the hosts' own stores hold, and give
// the same `report --json` for every period, the same figures in every dashboard panel and the same value for every
// alert rule as the union of the hosts' stores.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { alertQueries, loadSigmaRules } from '../../dashboards/alerts/src/grafana-alerts.js';
import { SIGMA_DIR } from '../../dashboards/alerts/src/alerts-file.js';
import { DASHBOARDS, INSIGHT_VARIABLES } from '../../dashboards/src/dashboards.js';
import { expandMacros } from '../../dashboards/src/macros.js';
import { ALL_VARIABLES } from '../../dashboards/src/sql.js';
import { openStore, type Store } from '../../sidecar/src/store/open-store.js';
import { DASHBOARD_DIR, HOSTS, ids, PERIODS, rows, runFleet, type FleetRun } from './fleet-scenario.js';

let run: FleetRun;
let reference: Store;

/** A query's rows with sums of fractions to 12 significant digits: each store adds its parts in its own order. */
async function figures(client: Store['client'], query: string): Promise<unknown[]> {
  const round = (value: unknown) => (typeof value === 'number' && !Number.isInteger(value) ? Number(value.toPrecision(12)) : value);
  return (await rows<Record<string, unknown>>(client, query)).map((row) => Object.fromEntries(Object.entries(row).map(([key, value]) => [key, round(value)])));
}

beforeAll(async () => {
  run = await runFleet(false);
  reference = await openStore(run.referenceDir, { command: 'test', access: 'read' });
}, 900_000);

afterAll(async () => {
  await reference?.close();
  await run?.close();
});

describe('a fleet of three hosts, two gateways and the real clickhouse exporter', () => {
  it('stores every span, log record and metric point of every host: nothing lost', async () => {
    expect([...run.missing.values()]).toEqual([]);
    const [fleetIds, referenceIds] = [await ids(run.fleetClient), await ids(reference.client)];
    expect(referenceIds.size).toBeGreaterThan(1000);
    expect([...referenceIds].filter((id) => !fleetIds.has(id))).toEqual([]);
    expect([...fleetIds].filter((id) => !referenceIds.has(id))).toEqual([]);
    const hosts = await rows<{ host: string }>(run.fleetClient, `SELECT DISTINCT ResourceAttributes['host.name'] AS host FROM otel_traces ORDER BY host`);
    expect(hosts.map((row) => row.host)).toEqual(HOSTS);
    const gateways = await rows<{ gateway: string }>(run.fleetClient, `SELECT DISTINCT SpanAttributes['ccotel.collector.gateway'] AS gateway FROM otel_traces ORDER BY gateway`);
    expect(gateways.map((row) => row.gateway)).toEqual(['gateway-1', 'gateway-2']);
  });

  it.each(PERIODS.map((period) => [period.join(' ') || 'overview']))('answers `report %s --json` as the hosts\' stores do: nothing counted twice', (period) => {
    const { fleet: fromFleet, reference: fromHosts } = run.reports.get(period)!;
    expect(fromFleet).toEqual(fromHosts);
  });

  it('shows the same figures in every dashboard panel', async () => {
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
        expect(await figures(run.fleetClient, query), `${name} "${panel.title}"`).toEqual(await figures(reference.client, query));
        compared++;
      }
    }
    expect(compared).toBeGreaterThan(20);
  });

  it('evaluates every alert rule to the same value', async () => {
    const range = { fromMs: run.corpusStartMs - 86_400_000, toMs: Date.now() + 3_600_000, intervalMs: 60_000 };
    for (const alert of alertQueries(loadSigmaRules(SIGMA_DIR))) {
      if (/otel_metrics_gauge/.test(alert.rawSql)) continue; // the sidecars' health, as above
      const query = expandMacros(alert.rawSql, range);
      expect(await figures(run.fleetClient, query), alert.title).toEqual(await figures(reference.client, query));
    }
  });
});
