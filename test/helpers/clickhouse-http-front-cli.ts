// FOR TESTS ONLY: runs the ClickHouse HTTP front (clickhouse-http-front.ts) as a process of its own, as tests and
// deploy/local-fleet.ts do (chdb holds one engine per process, and a test stops and restarts its ClickHouse target).
//
//   npx vite-node test/helpers/clickhouse-http-front-cli.ts -- --data DIR [--port N] [--schema FILE …]
// prints `listening http://127.0.0.1:PORT` once it answers; SIGTERM closes it.
import { parseArgs } from 'node:util';
import { startClickHouseFront } from './clickhouse-http-front.js';

const { values } = parseArgs({
  options: { data: { type: 'string' }, port: { type: 'string', default: '0' }, schema: { type: 'string', multiple: true }, database: { type: 'string' } },
});
if (!values.data) throw new Error('--data DIR is required');
const front = await startClickHouseFront({ dataDir: values.data, port: Number(values.port), schemaFiles: values.schema, database: values.database });
console.log(`listening ${front.url}`);
const stop = () => void front.close().then(() => process.exit(0));
process.once('SIGTERM', stop);
process.once('SIGINT', stop);
