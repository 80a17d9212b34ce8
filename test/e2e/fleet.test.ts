// The fleet path without faults (the scenario: fleet-scenario.ts): three hosts, two gateways, the real clickhouse
// exporter. The fleet's store must hold every span, log record and metric point the hosts' own stores hold, and give
// the same `report --json` for every period, the same figures in every dashboard panel, the same value for every
// alert rule and the same web view as the union of the hosts' stores (fleet-figures.ts).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openStore, type Store } from '../../sidecar/src/store/open-store.js';
import { figureTests } from './fleet-figures.js';
import { HOSTS, ids, rows, runFleet, type FleetRun } from './fleet-scenario.js';

let run: FleetRun;
let reference: Store;

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
    expect([...run.missingDetail.values()]).toEqual([]);
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

  figureTests(() => ({ run, reference: reference.client }));
});
