// The OTLP sink a configuration asks for: where it sends, and the settings the environment gives it.
import type { Config } from '../config.js';
import { sidecarResource } from '../resource.js';
import { OTLP_SINK_DEFAULTS, OtlpSink, type OtlpSinkOptions } from './otlp-sink.js';
import { resolveTargets } from './otlp-transport.js';

/**
 * The OTLP sink for a configuration: endpoint from `--otlp` / OTEL_EXPORTER_OTLP_ENDPOINT (config.otlpEndpoint),
 * everything else from the standard OTEL_EXPORTER_OTLP_* variables, resource from OTEL_SERVICE_NAME /
 * OTEL_RESOURCE_ATTRIBUTES, queue in <stateDir>/otlp-queue bounded by CCOTEL_OTLP_QUEUE_MAX_MB (default 256).
 * The OTEL_* variables are read from process.env, as the official exporters read them.
 */
export async function createOtlpSink(config: Config, overrides: Partial<OtlpSinkOptions> = {}): Promise<OtlpSink> {
  const queueMb = process.env.CCOTEL_OTLP_QUEUE_MAX_MB;
  if (queueMb !== undefined && !(Number(queueMb) > 0)) {
    throw new Error(`CCOTEL_OTLP_QUEUE_MAX_MB must be a number of megabytes > 0, not "${queueMb}"`);
  }
  return new OtlpSink({
    ...OTLP_SINK_DEFAULTS,
    targets: await resolveTargets(config.otlpEndpoint),
    resource: sidecarResource(config.contentLevel),
    queueDir: config.paths.otlpQueueDir,
    ...(queueMb !== undefined ? { queueMaxBytes: Math.round(Number(queueMb) * 1024 * 1024) } : {}),
    ...overrides,
  });
}
