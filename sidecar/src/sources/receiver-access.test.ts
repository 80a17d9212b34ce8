import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { afterAll, describe, expect, it } from 'vitest';
import type { TelemetryBatch } from '../model.js';
import { startTelemetryReceiver } from './otlp-receiver.js';
import { authorized, isLoopback, loadReceiverToken, parseListen } from './receiver-access.js';

const TOKEN = randomBytes(32).toString('hex');
const LOGS = JSON.stringify({ resourceLogs: [{ resource: { attributes: [] }, scopeLogs: [{ scope: { name: 'test' }, logRecords: [{ timeUnixNano: '1795168800000000000', body: { stringValue: 'hello' } }] }] }] });

describe('who may post to the receiver', () => {
  const dir = mkdtempSync(join(tmpdir(), 'ccotel-receiver-access-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('takes HOST:PORT, and tells loopback from the rest', () => {
    expect(parseListen('127.0.0.2:14318')).toEqual({ host: '127.0.0.2', port: 14318 });
    expect(parseListen('[::1]:9')).toEqual({ host: '::1', port: 9 });
    expect(() => parseListen('0.0.0.0')).toThrow(/HOST:PORT/);
    expect(() => parseListen('host:70000')).toThrow(/HOST:PORT/);
    expect(['127.0.0.1', '127.9.9.9', '::1', 'localhost'].map(isLoopback)).toEqual([true, true, true, true]);
    expect(['0.0.0.0', '10.0.0.5', '::', 'team-host', '128.0.0.1'].map(isLoopback)).toEqual([false, false, false, false, false]);
  });

  it('reads the token from the environment or an owner-only file, and refuses a short one or a file others may read', () => {
    const file = join(dir, 'token');
    writeFileSync(file, `${TOKEN}\n`, { mode: 0o600 });
    expect(loadReceiverToken(file, {})).toBe(TOKEN);
    expect(loadReceiverToken('', { CCOTEL_RECEIVER_TOKEN: TOKEN })).toBe(TOKEN);
    expect(loadReceiverToken('', {})).toBeUndefined();
    expect(() => loadReceiverToken('', { CCOTEL_RECEIVER_TOKEN: 'short' })).toThrow(/at least 32 characters/);
    chmodSync(file, 0o644);
    expect(() => loadReceiverToken(file, {})).toThrow(/may be read by others \(mode 644\)/);
  });

  it('compares the bearer token whole', () => {
    expect(authorized(`Bearer ${TOKEN}`, TOKEN)).toBe(true);
    expect([undefined, '', TOKEN, `Bearer ${TOKEN.slice(0, -1)}`, `Bearer ${TOKEN}x`, `Basic ${TOKEN}`].map((header) => authorized(header, TOKEN))).toEqual([false, false, false, false, false, false]);
  });

  it('will not listen beyond loopback without a token', async () => {
    await expect(startTelemetryReceiver({ host: '0.0.0.0', port: 0, deliver: async () => {} })).rejects.toThrow(/beyond loopback, needs a token/);
  });

  it('with a token, answers 401 to a request without it or with another, and stores nothing of it', async () => {
    const delivered: TelemetryBatch[] = [];
    const receiver = await startTelemetryReceiver({ host: '127.0.0.1', port: 0, token: TOKEN, deliver: async (batch) => void delivered.push(batch) });
    try {
      const post = (headers: Record<string, string>) => fetch(`${receiver.url}/v1/logs`, { method: 'POST', body: LOGS, headers: { 'content-type': 'application/json', ...headers } });
      for (const headers of [{}, { authorization: `Bearer ${randomBytes(32).toString('hex')}` }] as Record<string, string>[]) {
        const answer = await post(headers);
        expect(answer.status).toBe(401);
        expect(await answer.json()).toMatchObject({ code: 16 });
      }
      expect(delivered).toEqual([]);
      expect((await post({ authorization: `Bearer ${TOKEN}` })).status).toBe(200);
      expect(delivered).toHaveLength(1);
      expect(receiver.stats.refused).toBe(2);
    } finally {
      await receiver.close();
    }
  });
});
