// A local fleet in one command (deploy/local-fleet.ts says what runs):
//
//   npm run build && bash collector-config/build.sh
//   npx vite-node deploy/local-fleet-cli.ts -- --hosts 3 [--dir DIR] [--clickhouse http://…] [--sample-percent 100]
//
// prints each part's address and each host's HOME (write or copy transcripts under HOME/.claude/projects; each
// host's sidecar follows them live), then `ccotel report --store <ClickHouse URL>` reads the fleet's store.
// Ctrl-C stops every process it started (and removes the directory it made when --dir was not given).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { LocalFleet } from './local-fleet.js';

const { values } = parseArgs({
  args: process.argv.slice(2).filter((arg) => arg !== '--'),
  options: {
    hosts: { type: 'string', default: '3' },
    dir: { type: 'string' },
    clickhouse: { type: 'string' },
    'sample-percent': { type: 'string' },
  },
});
const dir = values.dir ?? mkdtempSync(join(tmpdir(), 'ccotel-fleet-'));
const fleet = new LocalFleet({
  dir,
  hosts: Array.from({ length: Number(values.hosts) }, (_, i) => `host-${i + 1}`),
  clickhouse: values.clickhouse,
  gatewayEnv: values['sample-percent'] ? { CCOTEL_TRACE_SAMPLE_PERCENT: values['sample-percent'] } : {},
});
await fleet.start();
console.log(`ClickHouse   ${fleet.storeUrl}${fleet.front ? ' (test front over the embedded engine, for tests)' : ''}`);
for (const gateway of fleet.gateways) console.log(`gateway      ${gateway.url} (gRPC ${gateway.grpcEndpoint})`);
console.log(`scale-out    ${fleet.scaleOut!.url}`);
for (const host of fleet.hosts) console.log(`${host.name.padEnd(12)} HOME=${host.home}`);
console.log(`\nccotel report --store ${fleet.storeUrl}\nCtrl-C stops the fleet.`);
process.once('SIGINT', () => {
  void fleet.stop().then(() => {
    if (!values.dir) rmSync(dir, { recursive: true, force: true });
    process.exit(0);
  });
});
