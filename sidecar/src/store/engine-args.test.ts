import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { openStore } from './open-store.js';

describe('the embedded engine', () => {
  it('runs with its caches bounded (server settings given when the store opens)', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'ccotel-engine-'));
    const store = await openStore(join(dir, 'store'), { command: 'backfill', access: 'write' });
    try {
      const result = await store.client.query({
        query: "SELECT name, value FROM system.server_settings WHERE name IN ('mark_cache_size', 'primary_index_cache_size', 'text_index_postings_cache_size', 'background_pool_size')",
        format: 'JSONEachRow',
      });
      const settings = Object.fromEntries((await result.json<{ name: string; value: string }>()).map((row) => [row.name, Number(row.value)]));
      expect(settings).toEqual({ mark_cache_size: 64 << 20, primary_index_cache_size: 32 << 20, text_index_postings_cache_size: 32 << 20, background_pool_size: 2 });
    } finally {
      await store.close();
      rmSync(dir, { recursive: true, force: true });
    }
  }, 120_000);
});
