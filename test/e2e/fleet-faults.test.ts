// The fleet path through faults (the scenario: fleet-scenario.ts): gateway-1 killed and restarted while the hosts
// send, ClickHouse killed and down for FLEET_CLICKHOUSE_OUTAGE_S (default 20 s; the issue's minute with 60), host-2's
// sidecar restarted while its transcripts grow. What holds, against the union of the hosts' own stores:
//   - every log record and metric point reaches the fleet's store (they wait in the hosts' disk queues, the
//     scale-out tier's and the gateways' persistent queues);
//   - spans are lost only as whole traces: those a killed gateway had acknowledged and held undecided in its tail
//     sampler (the bound in collector-config/README.md), never part of a trace.
// Not asserted, because it does not hold yet: equal figures. In runs with these faults `report` on the fleet's store
// counted more API responses and tool calls than the hosts' stores with the same set of ids (see the issue).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { rows, runFleet, type FleetRun } from './fleet-scenario.js';

let run: FleetRun;

beforeAll(async () => {
  run = await runFleet(true);
}, 900_000);

afterAll(async () => {
  await run?.close();
});

describe('a fleet through a gateway crash, a ClickHouse outage and a sidecar restart', () => {
  it('loses no log record and no metric point', () => {
    expect([...run.missing].filter(([, what]) => !what.startsWith('span '))).toEqual([]);
  });

  it('loses spans only as whole traces (undecided in a killed gateway\'s tail sampler)', async () => {
    const lostTraces = new Set([...run.missing.values()].filter((what) => what.startsWith('span ')).map((what) => what.split(' of trace ')[1]!));
    const partly = lostTraces.size === 0 ? [] : await rows(run.fleetClient, `SELECT DISTINCT TraceId FROM otel_traces WHERE TraceId IN (${[...lostTraces].map((id) => `'${id}'`).join(', ')})`);
    expect(partly).toEqual([]);
    expect(lostTraces.size).toBeLessThanOrEqual(2);
  });
});
