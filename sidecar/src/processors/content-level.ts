// Content level `none` (DESIGN section 7): ids, names, sizes and outcomes only. One stage strips every field
// that carries text, whatever produced it, so no path reaches a sink around it. Correlators and detectors
// upstream still see the text (a detector may need a command line), only the output loses it.
import type { Attributes, Processor, TelemetryBatch } from '../model.js';

/**
 * Every attribute that carries text from the input (docs/MASKING.md lists them per level). `error` is a hook's
 * error text: PostToolUseFailure's is the first line of what the failed tool printed.
 */
export const CONTENT_ATTRIBUTES = ['ccotel.prompt', 'ccotel.tool.input', 'ccotel.tool.output', 'process.command_line', 'error'] as const;

function withoutContent(attributes: Attributes): Attributes {
  const kept = { ...attributes };
  for (const key of CONTENT_ATTRIBUTES) delete kept[key];
  return kept;
}

export class NoContentProcessor implements Processor {
  readonly name = 'content-level-none';

  async process(batch: TelemetryBatch): Promise<TelemetryBatch> {
    return {
      spans: batch.spans.map((span) => ({
        ...span,
        statusMessage: '',
        attributes: withoutContent(span.attributes),
        events: span.events.map((event) => ({ ...event, attributes: withoutContent(event.attributes) })),
      })),
      logs: batch.logs.map((log) => ({ ...log, body: '', attributes: withoutContent(log.attributes) })),
      metrics: batch.metrics,
    };
  }
}
