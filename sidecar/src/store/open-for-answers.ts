// A reading command that asks the same questions again (`report`) opens its store here: an embedded store a sidecar
// serves is read through its endpoint, one nothing runs on from the answers it kept, and the engine (open-store.ts,
// with the schemas and chdb) is loaded only for a question neither can answer.
import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { AnswerCache, answeringClient, storeState } from './answer-cache.js';
import { endpointClient } from './endpoint-client.js';
import type { OpenOptions, Store } from './open-store.js';
import { isServerUrl, readLock } from './store-lock.js';

const openStore = async (target: string, options: OpenOptions) => (await import('./open-store.js')).openStore(target, options);

/**
 * As openStore, but an embedded store nothing runs on answers what it was asked before, while unchanged, from the
 * answers it kept (answer-cache.ts), and opens its engine only for a question it has no answer to; one a sidecar
 * serves is read through a client of its endpoint that has only what the report's reads use (endpoint-client.ts).
 */
export async function openStoreForAnswers(target: string, options: OpenOptions & { access: 'read' }): Promise<Store> {
  const dir = resolve(target);
  if (isServerUrl(target) || !existsSync(join(dir, 'chdb'))) return openStore(target, options);
  const lock = readLock(dir);
  if (lock?.endpoint && lock.pid !== process.pid) {
    const client = endpointClient({ ...lock.endpoint, database: options.database ?? 'default' });
    return { client, target, kind: 'endpoint', database: options.database ?? 'default', writers: [], created: false, close: () => client.close() };
  }
  if (lock) return openStore(target, options);
  const cache = new AnswerCache(dir, storeState(join(dir, 'chdb')));
  let opened: Promise<Store> | undefined;
  const open = () => (opened ??= openStore(target, options));
  return {
    client: answeringClient(cache, open),
    target: dir,
    kind: 'embedded',
    database: options.database ?? 'default',
    writers: [],
    created: false,
    close: async () => {
      if (opened) await (await opened).close();
    },
  };
}
