// A report's output as text, a kept one read from its file (report/kept-output.ts).
import type { KeptFile } from '../../sidecar/src/report/kept-output.js';

export function textOf(output: string | KeptFile): string {
  if (typeof output === 'string') return output;
  const chunks: Buffer[] = [];
  output.copy((chunk) => chunks.push(Buffer.from(chunk)));
  return Buffer.concat(chunks).toString('utf8');
}
