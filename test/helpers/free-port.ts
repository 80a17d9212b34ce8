// A loopback port that nobody listens on, for a child that binds it a moment later.
// A port from listen(0) is in the kernel's ephemeral range, where every outgoing connection of every
// test on the machine takes its local port too: one of those took a collector's port between our
// close and its bind in CI. So the port is drawn below that range, where only listeners live.
import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';

const LOWEST = 10_000;

function ephemeralRangeStart(): number {
  try {
    const [low] = readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/).map(Number);
    if (low !== undefined && low > LOWEST + 1_000) return low;
  } catch {
    // not Linux: the IANA dynamic range
  }
  return 49_152;
}

function listenable(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
  });
}

export async function freePort(): Promise<number> {
  const end = ephemeralRangeStart();
  for (let attempt = 0; attempt < 100; attempt++) {
    const port = LOWEST + Math.floor(Math.random() * (end - LOWEST));
    if (await listenable(port)) return port;
  }
  throw new Error(`no free loopback port in ${LOWEST}–${end - 1} after 100 tries`);
}
