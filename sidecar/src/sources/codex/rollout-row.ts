// One line of a Codex rollout (`$CODEX_HOME/sessions/YYYY/MM/DD/rollout-<time>-<thread id>.jsonl`): `{timestamp, type,
// payload}`, typed as far as the source reads it (codex-rs/protocol's RolloutItem). What a line lacks is a skip
// reason; a type or payload type the source does not read is of no use, never an error (new releases add some).
import type { SkipReason } from '../../records/agent-rows.js';
import { isJsonObject as isObject, parseJsonObject } from '../../records/json-object.js';

/** Token figures as Codex writes them: `input_tokens` includes the cached ones, `output_tokens` the reasoning ones. */
export interface CodexUsage {
  input_tokens: number;
  cached_input_tokens: number;
  output_tokens: number;
  reasoning_output_tokens: number;
  total_tokens: number;
}

export interface RolloutRow {
  timeMs: number;
  type: string;
  payload: Record<string, unknown>;
}

export type ParsedRollout = { ok: true; row: RolloutRow } | { ok: false; reason: SkipReason; type?: string };

export function parseRolloutLine(text: string): ParsedRollout {
  const parsed = parseJsonObject(text);
  if (!parsed.ok) return parsed;
  const { value } = parsed;
  const type = typeof value.type === 'string' ? value.type : undefined;
  const timeMs = typeof value.timestamp === 'string' ? Date.parse(value.timestamp) : Number.NaN;
  if (type === undefined || Number.isNaN(timeMs) || !isObject(value.payload)) return { ok: false, reason: 'missing_fields', type };
  return { ok: true, row: { timeMs, type, payload: value.payload } };
}

export function stringField(payload: Record<string, unknown>, key: string): string | undefined {
  const value = payload[key];
  return typeof value === 'string' ? value : undefined;
}

export function objectField(payload: Record<string, unknown>, key: string): Record<string, unknown> | undefined {
  const value = payload[key];
  return isObject(value) ? value : undefined;
}

/** A usage object, or undefined when it is not one (every figure a non-negative number; absent ones are 0). */
export function usageOf(value: unknown): CodexUsage | undefined {
  if (!isObject(value)) return undefined;
  const figure = (key: string): number | undefined => {
    const n = value[key] ?? 0;
    return typeof n === 'number' && Number.isFinite(n) && n >= 0 ? n : undefined;
  };
  const usage = {
    input_tokens: figure('input_tokens'),
    cached_input_tokens: figure('cached_input_tokens'),
    output_tokens: figure('output_tokens'),
    reasoning_output_tokens: figure('reasoning_output_tokens'),
    total_tokens: figure('total_tokens'),
  };
  return Object.values(usage).every((n) => n !== undefined) ? (usage as CodexUsage) : undefined;
}

/** The text of a function call's output: a string, or (older releases) `{ content }`. */
export function outputText(output: unknown): string | undefined {
  if (typeof output === 'string') return output;
  if (isObject(output) && typeof output.content === 'string') return output.content;
  return undefined;
}

/** The text of a message's content parts (`input_text` / `output_text`, or 0.171's `text`). */
export function contentText(content: unknown): string | undefined {
  if (!Array.isArray(content)) return undefined;
  const texts = content.filter(isObject).map((part) => part.text).filter((text): text is string => typeof text === 'string');
  return texts.length > 0 ? texts.join('\n') : undefined;
}
