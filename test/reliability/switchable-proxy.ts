// A loopback HTTP proxy in front of a ClickHouse HTTP endpoint that a test switches between states, to play
// a store server that goes down and comes back:
//   up       forwards every request
//   503      answers 503 Service Unavailable without forwarding
//   lost     forwards every request, but drops the connection before the answer of an INSERT (the server
//            stored the rows; the client sees a failure, retries, and must not store them twice)
//   refused  does not listen at all (connection refused); the same port is taken again when switched back
import { createServer, request as httpRequest, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export type ProxyMode = 'up' | '503' | 'lost' | 'refused';

export interface SwitchableProxy {
  url: string;
  /** Requests answered 503 or whose answer was lost (a refused connection is not counted). */
  readonly failedRequests: number;
  setMode(mode: ProxyMode): Promise<void>;
  close(): Promise<void>;
}

export async function startSwitchableProxy(upstream: string): Promise<SwitchableProxy> {
  const target = new URL(upstream);
  let mode: ProxyMode = 'up';
  let failedRequests = 0;
  const server: Server = createServer((request, response) => {
    if (mode === '503') {
      failedRequests++;
      request.resume();
      response.writeHead(503, { 'Content-Type': 'text/plain' }).end('store down for the test\n');
      return;
    }
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const body = Buffer.concat(chunks);
      const statement = new URL(request.url ?? '/', 'http://proxy').searchParams.get('query') ?? body.subarray(0, 64).toString('utf8');
      const lose = mode === 'lost' && /^\s*INSERT\b/i.test(statement);
      if (lose) failedRequests++;
      const forwarded = httpRequest(
        { host: target.hostname, port: target.port, method: request.method, path: request.url, headers: request.headers },
        (upstreamResponse) => {
          if (lose) {
            // Let the server finish the statement, then lose its answer.
            upstreamResponse.resume();
            upstreamResponse.on('end', () => response.socket?.destroy());
            return;
          }
          response.writeHead(upstreamResponse.statusCode ?? 502, upstreamResponse.headers);
          upstreamResponse.pipe(response);
        },
      );
      forwarded.on('error', () => response.socket?.destroy());
      forwarded.end(body);
    });
  });
  const listen = (port: number) =>
    new Promise<void>((resolveListen, rejectListen) => {
      server.once('error', rejectListen);
      server.listen(port, '127.0.0.1', () => {
        server.off('error', rejectListen);
        resolveListen();
      });
    });
  const stopListening = () =>
    new Promise<void>((resolveClose) => {
      server.close(() => resolveClose());
      server.closeAllConnections();
    });
  await listen(0);
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    get failedRequests() {
      return failedRequests;
    },
    async setMode(next: ProxyMode) {
      if (next === mode) return;
      if (next === 'refused') await stopListening();
      else if (mode === 'refused') await listen(port);
      else server.closeAllConnections(); // kept-alive sockets must not outlive the state they were opened in
      mode = next;
    },
    close: () => (mode === 'refused' ? Promise.resolve() : stopListening()),
  };
}
