// End-to-end through the real collector binary: gateway.yaml as shipped, with the ClickHouse
// exporter swapped for the file exporter by test-overlay-file.yaml; agent.yaml and scale-out.yaml
// in front of it. OTLP/HTTP JSON is written by hand so every byte sent is known.
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { requireCollectorBinary } from './binary.js';
import { startCollector, type RunningCollector } from './collector-process.js';
import { attributes, readExport, waitForExport, type AnyValue, type ExportedData } from './otlp-json.js';

const alnum = (length: number): string => {
  const chars = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
  return Array.from(randomBytes(length), (byte) => chars[byte % chars.length]).join('');
};
const upperAlnum = (length: number): string => alnum(length * 2).replace(/[a-z]/g, '').padEnd(length, 'Q').slice(0, length);
const hex = (bytes: number): string => randomBytes(bytes).toString('hex');
const base64url = (text: string): string => Buffer.from(text).toString('base64url');

/**
 * One generated fake per secret kind the gateway masks: `text` is what a sender puts in a value,
 * `secret` the part that must never reach the output.
 */
function fakeSecrets(): { kind: string; text: string; secret: string }[] {
  const kinds: { kind: string; secret: string; text?: (secret: string) => string }[] = [
    { kind: 'aws-access-key', secret: `AKIA${upperAlnum(16)}` },
    { kind: 'github-token', secret: `ghp_${alnum(36)}` },
    { kind: 'gitlab-token', secret: `glpat-${alnum(20)}` },
    { kind: 'slack-token', secret: `xoxb-${alnum(12)}-${alnum(24)}` },
    { kind: 'anthropic-api-key', secret: `sk-ant-api03-${alnum(48)}` },
    { kind: 'openai-api-key', secret: `sk-proj-${alnum(48)}` },
    { kind: 'stripe-key', secret: `sk_live_${alnum(24)}` },
    {
      kind: 'jwt',
      secret: `${base64url('{"alg":"HS256","typ":"JWT"}')}.${base64url(`{"sub":"${alnum(8)}"}`)}.${alnum(43)}`,
    },
    { kind: 'bearer-token', secret: alnum(40), text: (secret) => `curl -H "Authorization: Bearer ${secret}" https://api.example.test` },
    {
      kind: 'private-key',
      secret: `-----BEGIN RSA PRIVATE KEY-----\n${alnum(64)}\n${alnum(64)}\n-----END RSA PRIVATE KEY-----`,
      text: (secret) => `key file:\n${secret}\n(end)`,
    },
    { kind: 'connection-string-password', secret: alnum(16), text: (secret) => `psql postgres://app:${secret}@db.example.test:5432/app` },
    { kind: 'secret-assignment', secret: alnum(16), text: (secret) => `deploy --verbose password=${secret} --force` },
  ];
  return kinds.map(({ kind, secret, text }) => ({ kind, secret, text: text ? text(secret) : `found ${secret} in the output` }));
}

const stringOf = (value: AnyValue | undefined): string => value?.stringValue ?? '';
const NANOS_PER_SECOND = 1_000_000_000n;
const startNanos = BigInt(Date.now()) * 1_000_000n;

interface SpanSpec {
  traceId: string;
  spanId?: string;
  parentSpanId?: string;
  name: string;
  seconds?: number;
  error?: boolean;
  attributes?: Record<string, string | number | boolean>;
  events?: { name: string; attributes?: Record<string, string | number | boolean> }[];
}

function span(spec: SpanSpec) {
  const end = startNanos + BigInt(spec.seconds ?? 1) * NANOS_PER_SECOND;
  return {
    traceId: spec.traceId,
    spanId: spec.spanId ?? hex(8),
    parentSpanId: spec.parentSpanId ?? '',
    name: spec.name,
    kind: 1,
    startTimeUnixNano: String(startNanos),
    endTimeUnixNano: String(end),
    attributes: attributes(spec.attributes ?? {}),
    events: (spec.events ?? []).map((event) => ({
      name: event.name,
      timeUnixNano: String(startNanos),
      attributes: attributes(event.attributes ?? {}),
    })),
    status: spec.error ? { code: 2, message: 'tool failed' } : {},
  };
}

function resource(extra: Record<string, string> = {}) {
  return { attributes: attributes({ 'service.name': 'ccotel-collector-test', ...extra }) };
}

interface LogSpec {
  body: string;
  severityNumber: number;
  traceId?: string;
  attributes?: Record<string, string | number | boolean>;
}

function logsRequest(records: LogSpec[]) {
  return {
    resourceLogs: [
      {
        resource: resource(),
        scopeLogs: [
          {
            scope: { name: 'ccotel-test' },
            logRecords: records.map((record) => ({
              timeUnixNano: String(startNanos),
              severityNumber: record.severityNumber,
              body: { stringValue: record.body },
              traceId: record.traceId ?? '',
              attributes: attributes(record.attributes ?? {}),
            })),
          },
        ],
      },
    ],
  };
}

function tracesRequest(spans: ReturnType<typeof span>[], resourceExtra: Record<string, string> = {}) {
  return { resourceSpans: [{ resource: resource(resourceExtra), scopeSpans: [{ scope: { name: 'ccotel-test' }, spans }] }] };
}

async function post(port: number, signal: 'traces' | 'logs' | 'metrics', body: unknown, token?: string): Promise<number> {
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  if (token !== undefined) headers.authorization = `Bearer ${token}`;
  const response = await fetch(`http://127.0.0.1:${port}/v1/${signal}`, { method: 'POST', headers, body: JSON.stringify(body) });
  await response.text();
  return response.status;
}

/** Every string the output holds, to prove a secret appears nowhere at all. */
function allText(data: ExportedData): string {
  return JSON.stringify(data);
}

describe('ccotel collector (real binary)', () => {
  const workDirs: string[] = [];
  const collectors: RunningCollector[] = [];

  beforeAll(() => {
    requireCollectorBinary();
  });

  afterEach(async () => {
    // Stop by pid even when the test failed; then drop the temp files.
    await Promise.all(collectors.splice(0).map((collector) => collector.kill()));
    for (const dir of workDirs.splice(0)) rmSync(dir, { recursive: true, force: true });
  });

  async function startGateway(extraEnv: Record<string, string> = {}) {
    const dir = mkdtempSync(join(tmpdir(), 'ccotel-collector-'));
    workDirs.push(dir);
    const token = alnum(32);
    const exportPath = join(dir, 'export.jsonl');
    const gateway = await startCollector({
      configs: ['gateway.yaml', 'test-overlay-file.yaml'],
      env: {
        CCOTEL_GATEWAY_TOKEN: token,
        CCOTEL_GATEWAY_NAME: 'gateway-under-test',
        CCOTEL_FILE_EXPORT_PATH: exportPath,
        CCOTEL_STORAGE_DIR: join(dir, 'gateway-queue'),
        CCOTEL_TAIL_DECISION_WAIT: '3s',
        CCOTEL_TAIL_ROOT_WAIT: '1s',
        CCOTEL_SLOW_TURN_MS: '60000',
        ...extraEnv,
      },
    });
    collectors.push(gateway);
    return { gateway, token, exportPath, dir };
  }

  it('refuses senders without the bearer token', async () => {
    const { gateway, token } = await startGateway();
    const request = logsRequest([{ body: 'hello', severityNumber: 9 }]);
    expect(await post(gateway.ports.http, 'logs', request)).toBe(401);
    expect(await post(gateway.ports.http, 'logs', request, `${token}x`)).toBe(401);
    expect(await post(gateway.ports.http, 'logs', request, token)).toBe(200);
  });

  it('masks planted secrets in attributes, span events and log bodies, and keeps what must pass', async () => {
    const { gateway, token, exportPath } = await startGateway({ CCOTEL_TRACE_SAMPLE_PERCENT: '100' });
    const secrets = fakeSecrets();
    const traceId = hex(16);
    const rootId = hex(8);
    const sidecarMask = `[REDACTED:github-token:${hex(3)}]`;
    const resourceSecret = `ghp_${alnum(36)}`;
    const keyedSecret = alnum(20);
    const perKind = Object.fromEntries(secrets.map(({ kind, text }) => [`ccotel.test.${kind}.text`, text]));
    const harmless = {
      'gen_ai.usage.input_tokens': 1234,
      'ccotel.test.harmless': 'input_tokens=1234 max_tokens=99 task-assessment-documentation-v2 see https://example.test/a:b',
    };

    const spans = [
      span({ traceId, spanId: rootId, name: 'invoke_agent claude-code', attributes: { 'session.id': 'session-1', 'ccotel.turn.outcome': 'completed' } }),
      span({
        traceId,
        parentSpanId: rootId,
        name: 'execute_tool Bash',
        attributes: {
          ...perKind,
          ...harmless,
          'session.id': 'session-1',
          'gen_ai.tool.name': 'Bash',
          'db.password': keyedSecret,
          'http.request.header.authorization': sidecarMask,
        },
        events: [{ name: 'PreToolUse', attributes: perKind }],
      }),
    ];
    expect(await post(gateway.ports.http, 'traces', tracesRequest(spans, { 'host.note': `token ${resourceSecret}` }), token)).toBe(200);
    const logs: LogSpec[] = [
      { body: 'all kinds in attributes', severityNumber: 9, traceId, attributes: { ...perKind, 'event.name': 'ccotel.test.attributes' } },
      ...secrets.map(({ kind, text }) => ({ body: text, severityNumber: 13, attributes: { 'event.name': `ccotel.test.body.${kind}` } })),
    ];
    expect(await post(gateway.ports.http, 'logs', logsRequest(logs), token)).toBe(200);
    const metrics = {
      resourceMetrics: [
        {
          resource: resource(),
          scopeMetrics: [
            {
              scope: { name: 'ccotel-test' },
              metrics: [
                {
                  name: 'ccotel.tool.calls',
                  unit: '{call}',
                  sum: {
                    aggregationTemporality: 1,
                    isMonotonic: true,
                    dataPoints: [
                      {
                        startTimeUnixNano: String(startNanos),
                        timeUnixNano: String(startNanos + 60n * NANOS_PER_SECOND),
                        asInt: '3',
                        attributes: attributes({ 'gen_ai.tool.name': 'Bash', outcome: 'success', note: `leaked ${resourceSecret}` }),
                      },
                    ],
                  },
                },
              ],
            },
          ],
        },
      ],
    };
    expect(await post(gateway.ports.http, 'metrics', metrics, token)).toBe(200);

    const data = await waitForExport(
      exportPath,
      (seen) => seen.spans.length >= 2 && seen.logs.length >= logs.length && seen.points.length >= 1,
    );

    // Nothing of any planted secret is left anywhere in the output.
    const text = allText(data);
    for (const { kind, secret } of secrets) expect(text, kind).not.toContain(secret);
    expect(text).not.toContain(resourceSecret);
    expect(text).not.toContain(keyedSecret);

    // Each kind is masked with its own marker in each place it can appear.
    const tool = data.spans.find((s) => s.name === 'execute_tool Bash');
    expect(tool).toBeDefined();
    const attributesLog = data.logs.find((l) => stringOf(l.attributes['event.name']) === 'ccotel.test.attributes');
    for (const { kind } of secrets) {
      const marker = `[REDACTED:${kind}]`;
      expect(stringOf(tool?.attributes[`ccotel.test.${kind}.text`]), `span attribute ${kind}`).toContain(marker);
      expect(stringOf(tool?.events[0]?.attributes[`ccotel.test.${kind}.text`]), `span event ${kind}`).toContain(marker);
      expect(stringOf(attributesLog?.attributes[`ccotel.test.${kind}.text`]), `log attribute ${kind}`).toContain(marker);
      const bodyLog = data.logs.find((l) => stringOf(l.attributes['event.name']) === `ccotel.test.body.${kind}`);
      expect(stringOf(bodyLog?.body), `log body ${kind}`).toContain(marker);
    }
    // The text around a secret survives.
    expect(stringOf(tool?.attributes['ccotel.test.connection-string-password.text'])).toBe(
      'psql postgres://app:[REDACTED:connection-string-password]@db.example.test:5432/app',
    );

    // The second net: a key that names a secret, resource and metric attributes.
    expect(stringOf(tool?.attributes['db.password'])).toBe('****');
    expect(stringOf(tool?.resource['host.note'])).toContain('****');
    expect(stringOf(data.points[0]?.attributes.note)).toContain('****');
    // A sidecar's mask (kind and fingerprint) is kept as it is, and harmless values are untouched.
    expect(stringOf(tool?.attributes['http.request.header.authorization'])).toBe(sidecarMask);
    expect(tool?.attributes['gen_ai.usage.input_tokens']?.intValue).toBe('1234');
    expect(stringOf(tool?.attributes['ccotel.test.harmless'])).toBe(harmless['ccotel.test.harmless']);

    // Attributes arrive, with the gateway's provenance stamp; the metric point keeps its own.
    expect(stringOf(tool?.attributes['gen_ai.tool.name'])).toBe('Bash');
    expect(stringOf(tool?.attributes['session.id'])).toBe('session-1');
    expect(stringOf(tool?.attributes['ccotel.collector.gateway'])).toBe('gateway-under-test');
    expect(stringOf(attributesLog?.attributes['ccotel.collector.gateway'])).toBe('gateway-under-test');
    expect(attributesLog?.traceId).toBe(traceId);
    expect(data.points[0]?.metric).toBe('ccotel.tool.calls');
    expect(stringOf(data.points[0]?.attributes.outcome)).toBe('success');
  });

  it('skips the labelled pass only for data a sidecar masked already; the second net masks every sender', async () => {
    const { gateway, token, exportPath } = await startGateway({ CCOTEL_TRACE_SAMPLE_PERCENT: '100' });
    const github = `ghp_${alnum(36)}`;
    const assignment = alnum(16);
    const levels = ['masked', 'none', 'raw'] as const;
    const sent = levels.map((level) => {
      const traceId = hex(16);
      const request = tracesRequest(
        [span({ traceId, name: `invoke_agent ${level}`, attributes: { 'session.id': level, 'ccotel.test.text': `found ${github} and password=${assignment}` } })],
        { 'ccotel.content.level': level },
      );
      return { level, request };
    });
    for (const { request } of sent) expect(await post(gateway.ports.http, 'traces', request, token)).toBe(200);
    const data = await waitForExport(exportPath, (seen) => seen.spans.length >= levels.length);
    const textOf = (level: string) => stringOf(data.spans.find((s) => s.name === `invoke_agent ${level}`)?.attributes['ccotel.test.text']);

    // A token of a literal-led kind never passes, whatever the sender says about itself.
    expect(allText(data)).not.toContain(github);
    for (const level of ['masked', 'none']) {
      expect(textOf(level)).toBe(`found **** and password=${assignment}`);
    }
    // At content level raw the sidecar masked nothing: the labelled pass runs, as for any other sender.
    expect(textOf('raw')).toBe('found [REDACTED:github-token] and password=[REDACTED:secret-assignment]');
  });

  it('masks each span once, for both the sampled detail and the unsampled facts', async () => {
    const { gateway, token, exportPath } = await startGateway({ CCOTEL_TRACE_SAMPLE_PERCENT: '100' });
    const spans = Array.from({ length: 7 }, (_, n) => span({ traceId: hex(16), name: `invoke_agent ${n}`, attributes: { 'session.id': `s${n}` } }));
    expect(await post(gateway.ports.http, 'traces', tracesRequest(spans), token)).toBe(200);
    await waitForExport(exportPath, (seen) => seen.spans.length >= spans.length);
    // The collector's own counters: each processor's items summed over the pipelines it runs in.
    const metrics = await (await fetch(`http://127.0.0.1:${gateway.ports.metrics}/metrics`)).text();
    const incoming = (processor: string) => metrics.split('\n')
      .filter((line) => line.startsWith('otelcol_processor_incoming_items') && line.includes(`processor="${processor}"`) && line.includes('otel_signal="traces"'))
      .reduce((sum, line) => sum + Number(line.split(' ').at(-1)), 0);
    for (const processor of ['transform/redact_secrets', 'redaction', 'attributes/provenance']) expect(incoming(processor), processor).toBe(spans.length);
  });

  it('tail-samples turns: keeps errors, denials, failed turns, failure modes and slow turns, drops the rest', async () => {
    const { gateway, token, exportPath } = await startGateway({ CCOTEL_TRACE_SAMPLE_PERCENT: '0' });
    const root = (traceId: string, attrs: Record<string, string> = {}, extra: Partial<SpanSpec> = {}) => {
      const spanId = hex(8);
      return { spanId, span: span({ traceId, spanId, name: 'invoke_agent claude-code', attributes: { 'ccotel.turn.outcome': 'completed', ...attrs }, ...extra }) };
    };
    // The ordinary turn goes first: its decision is due no later than the kept ones', so once
    // those are written, a written ordinary turn would already be there.
    const ordinary = hex(16);
    const ordinaryRoot = root(ordinary);
    const ordinarySpans = [
      ordinaryRoot.span,
      span({ traceId: ordinary, parentSpanId: ordinaryRoot.spanId, name: 'execute_tool Read', attributes: { 'ccotel.tool.outcome': 'success' } }),
    ];
    expect(await post(gateway.ports.http, 'traces', tracesRequest(ordinarySpans), token)).toBe(200);
    // Logs are not sampled: the ordinary turn's log record arrives even though its spans do not.
    const logs: LogSpec[] = [
      { body: 'prompt submitted', severityNumber: 9, traceId: ordinary, attributes: { 'event.name': 'ccotel.prompt.submitted' } },
      { body: 'hook spool scanned', severityNumber: 5, attributes: { 'event.name': 'ccotel.hook.scanned' } },
      { body: 'debug chatter', severityNumber: 5 },
    ];
    expect(await post(gateway.ports.http, 'logs', logsRequest(logs), token)).toBe(200);

    const kept: Record<string, string> = {
      error: hex(16),
      denied: hex(16),
      interrupted: hex(16),
      failureMode: hex(16),
      slow: hex(16),
    };
    const deniedRoot = root(kept.denied);
    const keptSpans = [
      root(kept.error, {}, { error: true }).span,
      deniedRoot.span,
      span({ traceId: kept.denied, parentSpanId: deniedRoot.spanId, name: 'execute_tool Bash', attributes: { 'ccotel.tool.outcome': 'denied' } }),
      root(kept.interrupted, { 'ccotel.turn.outcome': 'interrupted' }).span,
      root(kept.failureMode, {}, { events: [{ name: 'ccotel.failure_mode.detected', attributes: { mode: 'orphan_process' } }] }).span,
      root(kept.slow, {}, { seconds: 120 }).span,
    ];
    expect(await post(gateway.ports.http, 'traces', tracesRequest(keptSpans), token)).toBe(200);

    const keptIds = Object.values(kept);
    const data = await waitForExport(exportPath, (seen) => keptIds.every((id) => seen.spans.some((s) => s.traceId === id)) && seen.logs.length >= 2);
    expect(data.spans.filter((s) => s.traceId === kept.denied)).toHaveLength(2);
    expect(data.spans.some((s) => s.traceId === ordinary)).toBe(false);
    expect(data.logs.map((l) => stringOf(l.body)).sort()).toEqual(['hook spool scanned', 'prompt submitted']);
  });

  it('decides every undecided trace on a graceful stop (SIGTERM): a restart loses no kept span; a crash loses them', async () => {
    const undecided = { CCOTEL_TRACE_SAMPLE_PERCENT: '100', CCOTEL_TAIL_DECISION_WAIT: '120s', CCOTEL_TAIL_ROOT_WAIT: '120s' };
    const sendTurns = async (port: number, token: string) => {
      const traces = [hex(16), hex(16), hex(16)];
      const spans = traces.flatMap((traceId) => {
        const rootId = hex(8);
        return [
          span({ traceId, spanId: rootId, name: 'invoke_agent claude-code', attributes: { 'ccotel.turn.outcome': 'completed' } }),
          span({ traceId, parentSpanId: rootId, name: 'chat claude-test', attributes: { 'gen_ai.usage.output_tokens': '2' } }),
        ];
      });
      expect(await post(port, 'traces', tracesRequest(spans), token)).toBe(200);
      return traces;
    };
    const stopped = await startGateway(undecided);
    const kept = await sendTurns(stopped.gateway.ports.http, stopped.token);
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    expect(readExport(stopped.exportPath).spans).toEqual([]); // still undecided, two minutes before the decision
    // A loaded machine may take a while to shut down: a generous grace, and a stop that needed SIGKILL is a failure.
    expect(await stopped.gateway.stop(90_000), stopped.gateway.log()).toBe('exited');
    expect(readExport(stopped.exportPath).spans.map((s) => s.traceId).sort(), stopped.gateway.log()).toEqual([...kept, ...kept].sort());

    // A crash loses them from otel_traces (their facts go through traces/facts, which holds nothing).
    const killed = await startGateway(undecided);
    await sendTurns(killed.gateway.ports.http, killed.token);
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    await killed.gateway.kill();
    expect(readExport(killed.exportPath).spans).toEqual([]);
  }, 300_000);

  it('carries data from agent.yaml and scale-out.yaml into the gateway', async () => {
    const { gateway, token, exportPath, dir } = await startGateway({ CCOTEL_TRACE_SAMPLE_PERCENT: '100' });
    const agent = await startCollector({
      configs: ['agent.yaml'],
      env: {
        CCOTEL_GATEWAY_ENDPOINT: `http://127.0.0.1:${gateway.ports.http}`,
        CCOTEL_GATEWAY_TOKEN: token,
        CCOTEL_STORAGE_DIR: join(dir, 'agent-queue'),
      },
    });
    collectors.push(agent);
    const scaleOut = await startCollector({
      configs: ['scale-out.yaml'],
      env: {
        CCOTEL_GATEWAYS: `[127.0.0.1:${gateway.ports.grpc}]`,
        CCOTEL_GATEWAY_TOKEN: token,
        CCOTEL_STORAGE_DIR: join(dir, 'scale-out-queue'),
      },
    });
    collectors.push(scaleOut);

    const viaAgent = hex(16);
    const viaScaleOut = hex(16);
    // The agent listens on loopback without auth; the scale-out tier checks the token.
    expect(await post(agent.ports.http, 'traces', tracesRequest([span({ traceId: viaAgent, name: 'invoke_agent claude-code' })]))).toBe(200);
    expect(await post(scaleOut.ports.http, 'traces', tracesRequest([span({ traceId: viaScaleOut, name: 'invoke_agent claude-code' })]))).toBe(401);
    expect(await post(scaleOut.ports.http, 'traces', tracesRequest([span({ traceId: viaScaleOut, name: 'invoke_agent claude-code' })]), token)).toBe(200);
    const logs = (body: string) => logsRequest([{ body, severityNumber: 9, attributes: { 'event.name': 'ccotel.test.relay' } }]);
    expect(await post(agent.ports.http, 'logs', logs('via agent'))).toBe(200);
    expect(await post(scaleOut.ports.http, 'logs', logs('via scale-out'), token)).toBe(200);

    const data = await waitForExport(
      exportPath,
      (seen) => [viaAgent, viaScaleOut].every((id) => seen.spans.some((s) => s.traceId === id)) && seen.logs.length >= 2,
    );
    expect(data.logs.map((l) => stringOf(l.body)).sort()).toEqual(['via agent', 'via scale-out']);
    expect(data.spans.every((s) => stringOf(s.attributes['ccotel.collector.gateway']) === 'gateway-under-test')).toBe(true);
  });
});
