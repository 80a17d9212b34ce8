// Reading an HTTP request body with a bound on what a peer can make the process hold: the body and, when it is
// gzip, what it inflates to. Shared by the servers a peer can reach (the query endpoint, the telemetry receiver).
import type { IncomingMessage } from 'node:http';
import { gunzipSync } from 'node:zlib';

/** Why a body was refused: `status` 413 (too large) or 400 (cannot be decompressed). */
export class BodyError extends Error {
  constructor(
    message: string,
    readonly status: 413 | 400,
  ) {
    super(message);
  }
}

/** The body, refused (413) once it, or what it inflates to, passes `maxBytes`. */
export async function readBody(request: IncomingMessage, maxBytes: number): Promise<Buffer> {
  const tooLarge = () => new BodyError(`request body over ${maxBytes} bytes`, 413);
  if (Number(request.headers['content-length'] ?? 0) > maxBytes) throw tooLarge();
  const body = await new Promise<Buffer>((resolveBody, rejectBody) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      chunks.push(chunk);
      if (size <= maxBytes) return;
      // Stop reading, without destroying the socket the answer goes out on.
      request.off('data', onData).pause();
      rejectBody(tooLarge());
    };
    request.on('data', onData).once('end', () => resolveBody(Buffer.concat(chunks))).once('error', rejectBody);
  });
  if (request.headers['content-encoding'] !== 'gzip') return body;
  try {
    return gunzipSync(body, { maxOutputLength: maxBytes });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ERR_BUFFER_TOO_LARGE') throw tooLarge();
    throw new BodyError(`cannot decompress the request body: ${(error as Error).message}`, 400);
  }
}
