import { cpSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { lastUserText, type RecordedRequest } from './model-server.js';
import type { OtlpExport } from './otlp-receiver.js';
import { readHookPayloads } from './run-claude.js';

// Writes one recorded sample folder (test/fixtures/real/…/<scenario>/): byte copies of the transcripts,
// hook payloads and native telemetry of a run, plus a summary of what the model server was asked.

export function writeJson(path: string, value: unknown): void {
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, JSON.stringify(value, null, 2) + '\n');
}

function modelRequestSummary(sessions: RecordedRequest[][]) {
  return sessions.map((requests) =>
    requests.map((r) => {
      const body = r.body as { model?: string; stream?: boolean; tools?: { name: string }[]; max_tokens?: number };
      return {
        method: r.method,
        path: r.path,
        handledAs: r.handledAs,
        sessionHeader: r.headers['x-claude-code-session-id'],
        traceparent: r.headers.traceparent,
        model: body.model,
        stream: body.stream,
        maxTokens: body.max_tokens,
        tools: body.tools?.map((t) => t.name),
        prompt: lastUserText(body).slice(0, 300),
        messageId: r.messageId,
        requestId: r.requestId,
        toolUseIds: r.toolUseIds,
      };
    }),
  );
}

export interface SampleRun {
  home: string;
  hookDir: string;
  telemetry: OtlpExport[];
  /** Per session, the requests its model server got. */
  requests: RecordedRequest[][];
  expectations: unknown;
}

/** Replaces `out` with the sample of one run. */
export function writeSampleFolder(out: string, run: SampleRun): void {
  rmSync(out, { recursive: true, force: true });
  cpSync(join(run.home, '.claude', 'projects'), join(out, 'projects'), { recursive: true });
  readHookPayloads(run.hookDir).forEach(({ file, payload }, i) =>
    cpSync(join(run.hookDir, file), join(out, 'hooks', `${String(i + 1).padStart(3, '0')}-${String(payload.hook_event_name)}.json`)),
  );
  mkdirSync(join(out, 'otel'), { recursive: true });
  for (const signal of ['traces', 'logs', 'metrics'] as const) {
    const bodies = run.telemetry.filter((e) => e.signal === signal).map((e) => e.raw);
    writeFileSync(join(out, 'otel', `${signal}.jsonl`), bodies.map((b) => b + '\n').join(''));
  }
  writeJson(join(out, 'model-requests.json'), modelRequestSummary(run.requests));
  writeJson(join(out, 'expectations.json'), run.expectations);
}
