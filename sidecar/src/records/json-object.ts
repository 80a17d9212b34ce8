// One line of JSON that must be an object, as every source of JSON lines reads it first (why not: a skip reason).

export type JsonObjectResult = { ok: true; value: Record<string, unknown> } | { ok: false; reason: 'malformed_json' | 'not_object' };

export function isJsonObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

export function parseJsonObject(text: string): JsonObjectResult {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return { ok: false, reason: 'malformed_json' };
  }
  return isJsonObject(value) ? { ok: true, value } : { ok: false, reason: 'not_object' };
}
