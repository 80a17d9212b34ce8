import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ENGINE_ARGS } from './engine-args.js';
import { openStore } from './open-store.js';

describe('the embedded engine', () => {
  it('runs with each of its arguments in effect (a server setting it does not know would be ignored)', async () => {
    const given = Object.fromEntries(ENGINE_ARGS.map((arg) => /^--(\w+)=(\d+)$/.exec(arg)!).map(([, name, value]) => [name, Number(value)]));
    const dir = mkdtempSync(join(tmpdir(), 'ccotel-engine-'));
    const store = await openStore(join(dir, 'store'), { command: 'backfill', access: 'write' });
    try {
      const result = await store.client.query({
        query: 'SELECT name, value FROM system.server_settings WHERE name IN {names:Array(String)}',
        query_params: { names: Object.keys(given) },
        format: 'JSONEachRow',
      });
      const settings = Object.fromEntries((await result.json<{ name: string; value: string }>()).map((row) => [row.name, Number(row.value)]));
      expect(settings).toEqual(given);
      // The caches ClickHouse sizes for a server (1–5 GB each) are bounded to tens of MB.
      expect(settings).toMatchObject({ mark_cache_size: 64 << 20, text_index_tokens_cache_size: 32 << 20, compiled_expression_cache_size: 16 << 20, background_pool_size: 2 });
    } finally {
      await store.close();
      rmSync(dir, { recursive: true, force: true });
    }
  }, 120_000);
});
