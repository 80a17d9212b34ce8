// An OTLP/HTTP receiver that accepts every export (an empty protobuf response is a full success), for timing and
// measuring an OTLP-only backfill without a Collector's own cost. In-process (`standInReceiver`), or as a process of
// its own that prints its URL (`node dist/bench/stand-in-receiver.js`), for a benchmark whose timing blocks its own
// event loop.
import { spawn } from 'node:child_process';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';

export interface StandInReceiver {
  url: string;
  /** Request body bytes received so far (in-process only). */
  received: { bytes: number };
  close: () => void;
}

export async function standInReceiver(): Promise<StandInReceiver> {
  const received = { bytes: 0 };
  const server = createServer((request, response) => {
    request.on('data', (chunk: Buffer) => (received.bytes += chunk.length));
    request.on('end', () => response.writeHead(200, { 'content-type': 'application/x-protobuf' }).end());
  });
  await new Promise<void>((listening) => server.listen(0, '127.0.0.1', listening));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, received, close: () => server.close() };
}

/** The receiver in a child process. */
export async function standInReceiverProcess(): Promise<StandInReceiver> {
  const child = spawn(process.execPath, [fileURLToPath(import.meta.url)], { stdio: ['ignore', 'pipe', 'inherit'] });
  const url = await new Promise<string>((resolveUrl, reject) => {
    child.stdout.once('data', (chunk: Buffer) => resolveUrl(chunk.toString().trim()));
    child.once('exit', (code) => reject(new Error(`the stand-in receiver exited (${code})`)));
  });
  return { url, received: { bytes: Number.NaN }, close: () => child.kill() };
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const { url } = await standInReceiver();
  console.log(url);
}
