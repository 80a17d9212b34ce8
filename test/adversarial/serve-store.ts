// A store served by the query endpoint in a process of its own, with the limits given as JSON in argv[2] and the
// thread pool its environment sizes (a vitest worker's has started with four threads).
// Prints the endpoint as one line of JSON ({url, token}); closes and removes the store when stdin ends.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openStore } from '../../sidecar/src/store/open-store.js';
import { DEFAULT_ENDPOINT_LIMITS, serveStore } from '../../sidecar/src/store/query-endpoint.js';

const dir = mkdtempSync(join(tmpdir(), 'ccotel-adv-serve-'));
const store = await openStore(join(dir, 'store'), { command: 'run', access: 'write' });
const endpoint = await serveStore(store, 'run', { ...DEFAULT_ENDPOINT_LIMITS, ...(JSON.parse(process.argv[2] ?? '{}') as object) });
process.stdout.write(`${JSON.stringify({ url: endpoint.url, token: endpoint.token })}\n`);
process.stdin.resume().once('end', () => {
  void endpoint
    .close()
    .then(() => store.close())
    .finally(() => rmSync(dir, { recursive: true, force: true }));
});
