// `ccotel doctor` against the real gateway collector (not a stand-in): the empty export it sends is
// accepted with the token and refused without it, and the health_check extension is read.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runDoctor } from '../../sidecar/src/doctor/run-doctor.js';
import { collectorBinary } from '../collector/binary.js';
import { Gateway } from '../collector/otlp-gateway.js';
import { skipWithout } from '../helpers/real-parts.js';

describe.skipIf(skipWithout(collectorBinary() === undefined ? 'the Collector binary is not built (npm run collector)' : undefined))('doctor and the real gateway', () => {
  let dir: string;
  let gateway: Gateway;
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'ccotel-doctor-gateway-'));
    gateway = new Gateway({ dir: join(dir, 'collector') });
    await gateway.start();
  });
  afterAll(async () => {
    await gateway.stop();
    delete process.env.OTEL_EXPORTER_OTLP_HEADERS;
    rmSync(dir, { recursive: true, force: true });
  });

  async function collectorCheck() {
    const report = await runDoctor({ env: { HOME: join(dir, 'home') }, store: '', otlp: gateway.url, timeoutMs: 5000 });
    return report.checks.find((check) => check.check === 'collector')!;
  }

  it('accepts the empty export with the token the sidecar sends', async () => {
    process.env.OTEL_EXPORTER_OTLP_HEADERS = `authorization=Bearer%20${gateway.token}`;
    expect(await collectorCheck()).toMatchObject({ status: 'ok', message: `${gateway.url}/v1/traces accepted an empty export (HTTP 200)` });
  });

  it('reports the refused token', async () => {
    process.env.OTEL_EXPORTER_OTLP_HEADERS = 'authorization=Bearer%20wrong';
    expect(await collectorCheck()).toMatchObject({ status: 'fail', message: expect.stringMatching(/HTTP 401 \(authentication\)/) });
  });
});
