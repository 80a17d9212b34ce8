import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RowMapper } from '../sinks/clickhouse-rows.js';
import { ClickHouseSink } from '../sinks/clickhouse-sink.js';
import { receivedLogs, receivedMetrics } from '../sources/otlp-received.js';
import { openStore, type Store } from '../store/open-store.js';
import { renderTelemetry } from '../commands/report.js';
import { telemetryReport, type TelemetryReport } from './telemetry.js';
import { chatSpan, MODEL, nativeExport, requestsOf } from '../../../test/helpers/native-export.js';

describe('report telemetry: native figures beside ccotel’s, and telemetry_gap', () => {
  let dir: string;
  let store: Store;
  let report: TelemetryReport;
  const session = (id: string) => report.sessions.find((s) => s.session === id)!;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'ccotel-telemetry-report-'));
    store = await openStore(dir, { command: 'test', access: 'write', rawTtlDays: 0 });
    const sink = new ClickHouseSink(store.writers, new RowMapper({ 'service.name': 'ccotel' }, 'test'), 'default');
    const write = async (native: ReturnType<typeof nativeExport>) => {
      await sink.write(receivedLogs(native.logs).batch);
      await sink.write(receivedMetrics(native.metrics).batch);
    };
    for (const id of ['clean', 'cut', 'renamed', 'twice', 'resent']) {
      const model = id === 'renamed' ? `${MODEL}[1m]` : MODEL;
      await sink.write({ spans: requestsOf(id).map((r) => chatSpan(id, r, model)), logs: [], metrics: [] });
    }
    await write(nativeExport('clean', requestsOf('clean')));
    // The exporter stopped after the first request (Claude Code's issue #92776).
    await write(nativeExport('cut', requestsOf('cut').slice(0, 1)));
    // The `[1m]` suffix dropped (#63536).
    await write(nativeExport('renamed', requestsOf('renamed')));
    // The same usage exported twice as other points (not a retry of the same request): counted twice.
    await write(nativeExport('twice', requestsOf('twice')));
    await write({ logs: { resourceLogs: [] }, metrics: nativeExport('twice', requestsOf('twice'), { shiftMs: 30_000 }).metrics });
    // A request retried byte for byte (the receiver answered too late) is stored once.
    await write(nativeExport('resent', requestsOf('resent')));
    await write(nativeExport('resent', requestsOf('resent')));
    report = await telemetryReport(store.client);
  });
  afterAll(async () => {
    await store?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('finds no gap where the export matches the transcript, and shows both figures', () => {
    const tokens = { input: 303, output: 120, cacheRead: 3000, cacheCreation: 500 };
    expect(session('clean')).toEqual({ session: 'clean', ccotel: { requests: 3, tokens, cost_usd: 0.03 }, native: { requests: 3, tokens, cost_usd: 0.03 }, gaps: [] });
    expect(session('resent').gaps).toEqual([]);
  });

  it('names an export cut off mid-session, and from when', () => {
    expect(session('cut').gaps).toEqual([
      '2 of 3 requests of the transcript not exported',
      'input tokens: 303 in the transcript, 100 exported',
      'output tokens: 120 in the transcript, 20 exported',
      'cacheRead tokens: 3000 in the transcript, 0 exported',
    ]);
    expect(session('cut').missing_from).toBe(new Date(requestsOf('cut')[1].atMs).toISOString());
  });

  it('names a renamed model and usage counted twice', () => {
    expect(session('renamed').gaps).toEqual([`model ${MODEL}[1m] exported as ${MODEL}`]);
    expect(session('twice').gaps).toEqual([
      'input tokens: 303 in the transcript, 606 exported',
      'output tokens: 120 in the transcript, 240 exported',
      'cacheRead tokens: 3000 in the transcript, 6000 exported',
      'cacheCreation tokens: 500 in the transcript, 1000 exported',
    ]);
    expect(report.gaps).toBe(3);
  });

  it('prints both figures per session, and each gap with when it began', () => {
    const text = renderTelemetry(report);
    expect(text).toMatch(/clean\s.*3 \/ 3.*303 \/ 303.*\bno\b/);
    expect(text).toMatch(/cut\s.*3 \/ 1.*303 \/ 100.*\byes\b/);
    expect(text).toContain(`cut: 2 of 3 requests of the transcript not exported; input tokens: 303 in the transcript, 100 exported`);
    expect(text).toContain(`(from ${session('cut').missing_from})`);
    expect(renderTelemetry({ sessions: [], gaps: 0 })).toMatch(/No session with Claude Code's own telemetry/);
  });
});
