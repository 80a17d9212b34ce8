import { recordIdOf } from '../ids.js';
import type { MetricPoint, Processor, TelemetryBatch } from '../model.js';
import { METRICS, metricPoint } from '../semconv.js';
import { MASK_MARKER, textFieldsOf } from './mask.js';

// Content caps, applied after masking: a field longer than the limit keeps its head, an ellipsis, and
// its original length in `<field>.original_length`. A cut never splits a surrogate pair (so the UTF-8
// encoding stays valid) or a mask marker (a marker is dropped whole rather than half kept).

export const DEFAULT_CONTENT_MAX_LENGTH = 4096;
export const ELLIPSIS = '…';

export interface CappedText {
  text: string;
  /** Length before capping, in UTF-16 code units like `max`. */
  originalLength: number;
  truncated: boolean;
}

const MARKER_AT = new RegExp(MASK_MARKER.source, 'y');
const LONGEST_MARKER = '[REDACTED::000000]'.length + 64;

/** The text cut to at most `max` UTF-16 code units, ellipsis included. */
export function capText(text: string, max: number): CappedText {
  if (text.length <= max) return { text, originalLength: text.length, truncated: false };
  let cut = Math.max(0, max - ELLIPSIS.length);
  const lastKept = text.charCodeAt(cut - 1);
  if (lastKept >= 0xd800 && lastKept <= 0xdbff) cut--;
  const markerStart = text.lastIndexOf('[REDACTED:', cut - 1);
  if (markerStart >= 0 && cut - markerStart < LONGEST_MARKER) {
    MARKER_AT.lastIndex = markerStart;
    if (MARKER_AT.test(text) && MARKER_AT.lastIndex > cut) cut = markerStart;
  }
  return { text: text.slice(0, cut) + ELLIPSIS, originalLength: text.length, truncated: true };
}

export class CapProcessor implements Processor {
  readonly name = 'cap';

  constructor(readonly maxTextLength = DEFAULT_CONTENT_MAX_LENGTH) {
    if (!Number.isInteger(maxTextLength) || maxTextLength < ELLIPSIS.length + 1) {
      throw new Error(`content max length must be an integer of at least 2, not ${maxTextLength}`);
    }
  }

  async process(input: TelemetryBatch): Promise<TelemetryBatch> {
    const collected = textFieldsOf(input, (value, uncapped) => !uncapped && value.length > this.maxTextLength);
    const truncations: MetricPoint[] = [];
    for (const field of collected.fields) {
      const capped = capText(field.value, this.maxTextLength);
      field.set(capped.text);
      field.owner.target[`${field.field}.original_length`] = capped.originalLength;
      truncations.push(
        metricPoint(METRICS.truncations, {
          id: recordIdOf('truncation', field.owner.id, field.field),
          timeMs: field.owner.timeMs,
          attributes: { field: field.field },
          traceId: field.owner.traceId,
          spanId: field.owner.spanId,
        }),
      );
    }
    const batch = collected.batch();
    return { ...batch, metrics: batch.metrics.concat(truncations) };
  }
}
