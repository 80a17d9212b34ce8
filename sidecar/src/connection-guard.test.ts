import { once } from 'node:events';
import { Agent, request } from 'node:http';
import { connect, type AddressInfo, type Socket } from 'node:net';
import { describe, expect, it } from 'vitest';
import { connectionCap, descriptorLimit, guardedServer } from './connection-guard.js';

describe('connection budget', () => {
  it('gives each of the three servers a twelfth of the descriptor limit, at most 128', () => {
    expect(connectionCap(1024)).toBe(85);
    expect(connectionCap(256)).toBe(21);
    expect(connectionCap(20_000)).toBe(128);
    expect(connectionCap(4)).toBe(1);
    expect(connectionCap(undefined)).toBe(128);
    expect(descriptorLimit()).toBeGreaterThan(0);
  });
});

describe('guardedServer', () => {
  const closed = (socket: Socket) => new Promise<boolean>((resolveClosed) => socket.once('close', () => resolveClosed(true)));

  it('closes the silent connection idle longest for a newcomer, before a trusted client kept alive', async () => {
    const server = guardedServer({ maxConnections: 2, headersTimeoutMs: 5_000 }, (req) => req.headers['x-key'] === 'ok', (_req, res) => res.end('hi'));
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    const { port } = server.address() as AddressInfo;
    try {
      // A client with the key, its connection kept alive after the answer.
      const agent = new Agent({ keepAlive: true, maxSockets: 1 });
      const body = await new Promise<string>((resolveBody) => {
        request({ port, host: '127.0.0.1', agent, headers: { 'x-key': 'ok' } }, (res) => {
          let text = '';
          res.on('data', (chunk) => (text += chunk)).on('end', () => resolveBody(text));
        }).end();
      });
      expect(body).toBe('hi');
      const silent = connect(port, '127.0.0.1');
      const silentClosed = closed(silent);
      await once(silent, 'connect');
      await new Promise((resolveDelay) => setTimeout(resolveDelay, 50));
      // Full: the newcomer pushes out the silent one, not the client's kept-alive socket.
      const newcomer = connect(port, '127.0.0.1');
      expect(await silentClosed).toBe(true);
      expect(agent.freeSockets[Object.keys(agent.freeSockets)[0]]?.length).toBe(1);
      newcomer.destroy();
      agent.destroy();
    } finally {
      server.closeAllConnections();
      server.close();
    }
  });
});
