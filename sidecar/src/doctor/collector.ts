// Collector reachable and accepting: an empty OTLP export POSTed where the sidecar sends traces (same
// endpoint, headers and TLS settings, from --otlp and OTEL_EXPORTER_OTLP_*), and the health_check
// extension when its URL is given. The answer's Date header feeds the clock check.
import http from 'node:http';
import https from 'node:https';
import { resolveTargets } from '../sinks/otlp-transport.js';
import { result, type Check, type CheckResult } from './check.js';

interface ProbeAnswer {
  status?: number;
  date?: string;
  body?: string;
  error?: string;
}

function probe(url: string, options: { method: string; headers?: Record<string, string>; agent?: http.Agent; timeoutMs: number }): Promise<ProbeAnswer> {
  const request = url.startsWith('https:') ? https.request : http.request;
  return new Promise((resolve) => {
    const req = request(url, { method: options.method, headers: options.headers, agent: options.agent, timeout: options.timeoutMs }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => resolve({ status: res.statusCode, date: res.headers.date, body: Buffer.concat(chunks).toString('utf8', 0, 200) }));
      res.on('error', (error) => resolve({ error: error.message }));
    });
    req.on('timeout', () => req.destroy(new Error(`no answer within ${options.timeoutMs} ms`)));
    req.on('error', (error: NodeJS.ErrnoException) => resolve({ error: error.code ? `${error.code} (${error.message})` : error.message }));
    req.end(options.method === 'POST' ? new Uint8Array() : undefined);
  });
}

/** What an HTTP status from an OTLP receiver means for the user. */
function exportResult(url: string, answer: ProbeAnswer): CheckResult {
  const { status } = answer;
  if (status === undefined) return result('collector', 'fail', `${url}: ${answer.error}`, 'start the collector, or correct --otlp / OTEL_EXPORTER_OTLP_ENDPOINT (OTLP/HTTP, usually port 4318)');
  if (status >= 200 && status < 300) return result('collector', 'ok', `${url} accepted an empty export (HTTP ${status})`);
  if (status === 401 || status === 403) {
    return result('collector', 'fail', `${url} refused the export: HTTP ${status} (authentication)`, 'set the token: OTEL_EXPORTER_OTLP_HEADERS="Authorization=Bearer <token>"');
  }
  if (status === 404 || status === 405) {
    return result('collector', 'fail', `${url}: HTTP ${status}, no OTLP/HTTP receiver there`, 'point --otlp at the OTLP/HTTP base URL (e.g. http://collector:4318, without /v1/traces)');
  }
  return result('collector', 'fail', `${url} did not accept the export: HTTP ${status} ${answer.body ?? ''}`.trim(), 'look at the collector log (memory limiter refusing? exporter queue full?)');
}

export const collectorCheck: Check = async (context) => {
  const endpoint = context.config.otlpEndpoint;
  const results: CheckResult[] = [];
  if (endpoint === '') return result('collector', 'ok', 'no collector configured (store only)');
  let target;
  try {
    target = (await resolveTargets(endpoint)).traces;
  } catch (error) {
    return result('collector', 'fail', (error as Error).message, 'correct --otlp / OTEL_EXPORTER_OTLP_* (see README, Configuration)');
  }
  const answer = await probe(target.url, {
    method: 'POST',
    headers: { ...target.headers, 'Content-Type': 'application/x-protobuf' },
    agent: target.agent,
    timeoutMs: context.timeoutMs,
  });
  if (answer.date) context.facts.collectorDate = { dateMs: Date.parse(answer.date), receivedMs: context.now() };
  results.push(exportResult(target.url, answer));
  if (context.collectorHealthUrl) {
    const health = await probe(context.collectorHealthUrl, { method: 'GET', timeoutMs: context.timeoutMs });
    if (health.status !== 200) {
      results.push(result('collector', 'fail', `health check ${context.collectorHealthUrl}: ${health.status !== undefined ? `HTTP ${health.status} ${health.body ?? ''}`.trim() : health.error}`, 'the collector is up but not ready: look at its log'));
    }
  }
  return results.find((r) => r.status === 'fail') ?? results[0]!;
};
