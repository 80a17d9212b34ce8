import { describe, expect, it } from 'vitest';
import { chatSpan, nativeExport, requestsOf, sessionStarted, T0 } from '../../../../test/helpers/native-export.js';
import { emptyBatch, type TelemetryBatch } from '../../model.js';
import { receivedLogs, receivedMetrics } from '../../sources/otlp-received.js';
import { GAP_SETTLE_MS, TelemetryGapDetector } from './telemetry-gap.js';
import { nativeDialects } from '../../sources/native-telemetry.js';

/** A detector following from before T0, on a clock the test moves. */
function detector(sinceMs = T0 - 60_000) {
  const clock = { nowMs: T0 };
  const gaps = new TelemetryGapDetector(nativeDialects(), sinceMs, GAP_SETTLE_MS, () => clock.nowMs);
  const feed = async (batch: TelemetryBatch) => void (await gaps.process(batch));
  const exported = async (native: ReturnType<typeof nativeExport>) => {
    await feed(receivedLogs(native.logs).batch);
    await feed(receivedMetrics(native.metrics).batch);
  };
  const transcript = (session: string) => feed({ ...emptyBatch(), logs: [sessionStarted(session)], spans: requestsOf(session).map((request) => chatSpan(session, request)) });
  const settled = () => {
    clock.nowMs += GAP_SETTLE_MS;
    return gaps.check();
  };
  return { gaps, clock, exported, transcript, settled };
}

describe('telemetry_gap detector', () => {
  it('finds nothing on a clean session, nor on an export resent byte for byte', async () => {
    const { exported, transcript, settled } = detector();
    await transcript('clean');
    await exported(nativeExport('clean', requestsOf('clean')));
    await exported(nativeExport('clean', requestsOf('clean')));
    expect(settled()).toEqual(emptyBatch());
  });

  it('tells an export cut off mid-session once, as a failure-mode record naming the session, what differs and from when', async () => {
    const { gaps, exported, transcript, settled, clock } = detector();
    await transcript('cut');
    // Claude Code's exporter stopped after the first request (its issue #92776).
    await exported(nativeExport('cut', requestsOf('cut').slice(0, 1)));
    clock.nowMs += GAP_SETTLE_MS / 2;
    expect(gaps.check()).toEqual(emptyBatch()); // not quiet long enough: more may come
    const found = settled();
    const from = new Date(requestsOf('cut')[1].atMs).toISOString();
    expect(found.logs).toEqual([expect.objectContaining({
      eventName: 'ccotel.failure_mode.detected', severity: 'WARN', timeMs: requestsOf('cut')[1].atMs,
      attributes: { 'session.id': 'cut', mode: 'telemetry_gap', cause: 'not_exported,tokens_differ' },
      body: `2 of 3 requests of the transcript not exported; input tokens: 303 in the transcript, 100 exported; output tokens: 120 in the transcript, 20 exported; cacheRead tokens: 3000 in the transcript, 0 exported (from ${from})`,
    })]);
    expect(found.metrics).toEqual([expect.objectContaining({ name: 'ccotel.failure_modes', value: 1, attributes: { 'gen_ai.agent.name': 'claude-code', mode: 'telemetry_gap' } })]);
    expect(settled()).toEqual(emptyBatch()); // told once
  });

  it('tells a duplicated export (the same requests and usage sent again as other records)', async () => {
    const { exported, transcript, settled } = detector();
    await transcript('twice');
    await exported(nativeExport('twice', requestsOf('twice')));
    await exported(nativeExport('twice', requestsOf('twice'), { shiftMs: 30_000 }));
    const [record] = settled().logs;
    expect(record.attributes).toMatchObject({ mode: 'telemetry_gap', cause: 'exported_twice,tokens_differ' });
    expect(record.body).toMatch(/^3 requests exported more than once; input tokens: 303 in the transcript, 606 exported/);
  });

  it('leaves sessions begun before it started (or before a restart: no start read), and sessions with none of Claude Code’s own telemetry', async () => {
    const { exported, transcript, settled, gaps } = detector(T0);
    await transcript('before');
    await exported(nativeExport('before', requestsOf('before').slice(0, 1)));
    await gaps.process({ ...emptyBatch(), spans: requestsOf('restart').map((request) => chatSpan('restart', request)) });
    await exported(nativeExport('restart', requestsOf('restart').slice(0, 1)));
    const later = detector();
    await later.transcript('ccotel-only');
    expect([settled(), later.settled()]).toEqual([emptyBatch(), emptyBatch()]);
  });
});
