// The one encoder: correlation events in, spans, logs and metric points out (names, units and id recipes from
// semconv.ts). What the joins add to an event (a hook on a span) comes as an event of the same round, applied here
// as the item is built: nothing already encoded is edited. One file per family of events.
import { hooksBySpan, type Correlated, type CorrelationEvent } from '../../events.js';
import { concatBatches, emptyBatch, type TelemetryBatch } from '../../model.js';
import { encodeChat } from './chats.js';
import { encodeToolCall } from './tool-calls.js';
import { encodeCompaction, encodeTurn } from './turns.js';

export function encode(events: readonly CorrelationEvent[]): TelemetryBatch {
  const out = emptyBatch();
  const hooks = hooksBySpan(events);
  for (const event of events) {
    switch (event.kind) {
      case 'ToolCallEnded':
        encodeToolCall(event, out, hooks.get(event.spanId));
        break;
      case 'TurnEnded':
        encodeTurn(event, out, hooks.get(event.spanId));
        break;
      case 'CompactionOccurred':
        encodeCompaction(event, out);
        break;
      case 'ChatCompleted':
        encodeChat(event, out);
        break;
    }
  }
  return out;
}

/** What a stage emitted already encoded, with its events encoded after it. */
export function encodeCorrelated({ batch, events }: Correlated): TelemetryBatch {
  return concatBatches(batch, encode(events));
}
