// The HTTP servers a local user can reach (the query endpoint, the web view, the telemetry receiver) each hold
// at most a share of the process's descriptors, so that a flood of connections never leaves the sources without
// one for a file:
// the sockets of all of them together stay under a quarter of the soft RLIMIT_NOFILE. When a server is full,
// the connection that has been idle longest is closed for the new one, so a peer holding idle (or slow, or
// reconnecting) sockets cannot keep out a client that sends its request at once; only a connection whose
// request is in progress and trusted (the token, the cookie) is never closed for another.
import { readFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type RequestListener, type Server } from 'node:http';
import type { Socket } from 'node:net';

/** Servers that share the budget: the query endpoint, the web view and the telemetry receiver. */
const SERVERS = 3;
/** Of the descriptor limit, what the servers' sockets may use; the rest is kept for files (store, checkpoints, spool, /proc). */
const SOCKET_SHARE = 1 / 4;
/**
 * Far more than the CLI and a few browser tabs need: the more a server holds, the more connections a flood must
 * open to push out a newcomer before its request arrives.
 */
const MAX_CONNECTIONS = 128;
/** Time a peer has to send its request headers (or the whole request, ×3), and to say anything at all. */
export const HEADERS_TIMEOUT_MS = 10_000;

/** The soft limit on open descriptors (`ulimit -n`), from /proc/self/limits; undefined where it cannot be read or is unlimited. */
export function descriptorLimit(): number | undefined {
  let limits: string;
  try {
    limits = readFileSync('/proc/self/limits', 'utf8');
  } catch {
    return undefined;
  }
  const soft = /^Max open files\s+(\d+)/m.exec(limits)?.[1];
  return soft === undefined ? undefined : Number(soft);
}

/** Connections one server may hold under the descriptor limit `limit`. */
export function connectionCap(limit = descriptorLimit()): number {
  if (limit === undefined) return MAX_CONNECTIONS;
  return Math.max(1, Math.min(MAX_CONNECTIONS, Math.floor((limit * SOCKET_SHARE) / SERVERS)));
}

export interface ConnectionLimits {
  maxConnections: number;
  headersTimeoutMs: number;
}

/** An open connection: trusted requests in progress, and whether it ever sent one. */
interface Held {
  busy: number;
  trusted: boolean;
}

/**
 * An HTTP server that holds at most `limits.maxConnections` connections (see above). `trusted` says whether a
 * request's connection is kept while it is answered, however long that takes (the listener's own limits
 * bound it); any other connection is closed after `headersTimeoutMs` without a word, or for a newcomer.
 */
export function guardedServer(limits: ConnectionLimits, trusted: (request: IncomingMessage) => boolean, listener: RequestListener): Server {
  /** Open connections, the longest idle first. */
  const open = new Map<Socket, Held>();
  const server = createServer(
    { headersTimeout: limits.headersTimeoutMs, requestTimeout: limits.headersTimeoutMs * 3, connectionsCheckingInterval: 1_000 },
    (request, response) => {
      const socket = request.socket;
      const held = open.get(socket);
      // Node leaves a kept-alive connection's second request without a timeout: a peer that does not read its
      // answer would hold the socket.
      socket.setTimeout(limits.headersTimeoutMs);
      if (held && trusted(request)) {
        socket.setTimeout(0);
        held.busy++;
        held.trusted = true;
        response.once('close', () => {
          held.busy--;
          // Idle again as of now: last in line to be closed.
          if (open.delete(socket)) open.set(socket, held);
        });
      }
      listener(request, response);
    },
  );
  server.on('connection', (socket: Socket) => {
    if (open.size >= limits.maxConnections && !closeLongestIdle(open)) {
      socket.destroy();
      return;
    }
    socket.setTimeout(limits.headersTimeoutMs);
    open.set(socket, { busy: 0, trusted: false });
    socket.once('close', () => open.delete(socket));
  });
  // The client keeps sockets alive; close() must not wait for them.
  server.keepAliveTimeout = 5_000;
  return server;
}

/**
 * Close, for a newcomer, the connection idle longest among those that never sent a trusted request (a flood's),
 * else among the idle trusted ones (a client's kept-alive socket). False when every one is answering.
 */
function closeLongestIdle(open: Map<Socket, Held>): boolean {
  const idle = [...open].filter(([, held]) => held.busy === 0);
  const victim = (idle.find(([, held]) => !held.trusted) ?? idle[0])?.[0];
  if (!victim) return false;
  open.delete(victim);
  victim.destroy();
  return true;
}
