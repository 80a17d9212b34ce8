// What `ccotel report` prints, kept while the answers it was made of stand. At 1 GB of history `report session --json`
// is 4.8 MB of output made from 6 000 rows: reading the rows, grouping them and writing them out was ~0.4 s of CPU
// even when the running sidecar (or the cold reader's kept answers) gave the rows at once (issue 36). So the output
// is kept in the store directory's answers (answer-cache.ts) with the tags of the answers it was made of
// (kept-answers.ts TaggingClient), under the report's arguments and this build; asked again, the client asks only
// whether each of those answers still stands (the endpoint: If-None-Match; with nothing running: the store's
// fingerprint) and prints the kept bytes. An output made of an answer without a tag (one that reads the clock, or
// asked while the store changed) is never kept.
import type { ClickHouseClient, QueryParams } from '@clickhouse/client';
import { createHash } from 'node:crypto';
import { readFileSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { SIDECAR_VERSION } from '../resource.js';
import { ANSWERS_DIR, keepFile, markUsed } from '../store/answer-cache.js';
import type { TaggingClient } from '../store/kept-answers.js';

/** This build: every build writes each module anew, so an output another build made (perhaps differently) is not found. */
const BUILD = `${SIDECAR_VERSION} ${statSync(fileURLToPath(import.meta.url)).mtimeMs}`;

/** A question the output was made of, and its answer's tag. */
interface Asked {
  params: QueryParams;
  tag: string;
}

const isTagging = (client: unknown): client is TaggingClient => typeof (client as Partial<TaggingClient>).stillAnswers === 'function';

/**
 * The output `render` makes of the store's answers to the report `key` names (everything the questions and the output
 * depend on besides the answers): kept in the store directory `storeDir` and given again, as bytes, while the answers
 * it was made of stand. A client whose answers have no tags (a ClickHouse server) always renders.
 */
export async function keptOutput(client: ClickHouseClient, storeDir: string, key: unknown[], render: (client: ClickHouseClient) => Promise<string>): Promise<string | Buffer> {
  if (!isTagging(client)) return render(client);
  const tagging: TaggingClient = client;
  const dir = join(resolve(storeDir), ANSWERS_DIR);
  const name = `${createHash('sha256').update(JSON.stringify([BUILD, ...key])).digest('hex')}.out`;
  const path = join(dir, name);
  const kept = await stillStanding(tagging, path);
  if (kept) return kept;
  const asked: (Asked | undefined)[] = [];
  const recording = {
    query: async (params: QueryParams) => {
      const result = await tagging.query(params);
      asked.push(result.tag === undefined ? undefined : { params, tag: result.tag });
      return result;
    },
  } as unknown as ClickHouseClient;
  const output = await render(recording);
  if (asked.length > 0 && asked.every((question) => question !== undefined)) {
    try {
      keepFile(dir, name, `${JSON.stringify(asked)}\n${output}`);
    } catch {
      // Not kept (a full disk, a store directory this user cannot write): the output stands, made anew next time.
    }
  }
  return output;
}

/** The output kept at `path` (after its line of questions), if each of its answers still stands. */
async function stillStanding(client: TaggingClient, path: string): Promise<Buffer | undefined> {
  let file: Buffer;
  try {
    file = readFileSync(path);
  } catch {
    return undefined;
  }
  const newline = file.indexOf(10);
  const asked = JSON.parse(file.subarray(0, newline).toString('utf8')) as Asked[];
  for (const { params, tag } of asked) if (!(await client.stillAnswers(params, tag))) return undefined;
  markUsed(path);
  return file.subarray(newline + 1);
}
