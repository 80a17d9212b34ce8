// Split an encoded OTLP export request in two, for a collector that answers 413 to a request read back
// from the disk queue (whose items are gone from memory). All three requests have the same shape:
// request { 1: resource entry { 2: scope entry { 2: item } } } (resource_spans / scope_spans / spans, and
// the same for logs and metrics); every other field is copied as it is.

interface Field {
  number: number;
  /** The whole field as it is on the wire: tag, and length and body where there are. */
  raw: Uint8Array;
  /** The body of a length-delimited field. */
  body?: Uint8Array;
}

const LENGTH_DELIMITED = 2;
const RESOURCE_ENTRY = 1;
const SCOPE_ENTRY = 2;
const ITEM = 2;

function readVarint(bytes: Uint8Array, at: number): { value: number; next: number } {
  let value = 0;
  for (let shift = 0, i = at; i < bytes.length && shift < 64; shift += 7, i++) {
    value += (bytes[i] & 0x7f) * 2 ** shift;
    if ((bytes[i] & 0x80) === 0) return { value, next: i + 1 };
  }
  throw new Error('truncated protobuf varint');
}

function fieldsOf(bytes: Uint8Array): Field[] {
  const fields: Field[] = [];
  for (let at = 0; at < bytes.length; ) {
    const start = at;
    const tag = readVarint(bytes, at);
    at = tag.next;
    const wireType = tag.value % 8;
    let body: Uint8Array | undefined;
    if (wireType === 0) at = readVarint(bytes, at).next;
    else if (wireType === 1) at += 8;
    else if (wireType === 5) at += 4;
    else if (wireType === LENGTH_DELIMITED) {
      const length = readVarint(bytes, at);
      body = bytes.subarray(length.next, length.next + length.value);
      at = length.next + length.value;
    } else throw new Error(`unsupported protobuf wire type ${wireType}`);
    if (at > bytes.length) throw new Error('truncated protobuf field');
    fields.push({ number: Math.floor(tag.value / 8), raw: bytes.subarray(start, at), body });
  }
  return fields;
}

function varint(value: number): number[] {
  const out: number[] = [];
  for (; value >= 0x80; value = Math.floor(value / 128)) out.push((value % 128) | 0x80);
  out.push(value);
  return out;
}

function lengthDelimited(number: number, parts: Uint8Array[]): Uint8Array {
  const length = parts.reduce((sum, part) => sum + part.length, 0);
  return Buffer.concat([Uint8Array.from([...varint(number * 8 + LENGTH_DELIMITED), ...varint(length)]), ...parts]);
}

/** `body` as two requests holding the first and the second half of its items, or undefined under two items. */
export function splitExportRequest(body: Uint8Array): Array<{ body: Uint8Array; items: number }> | undefined {
  const request = fieldsOf(body);
  const total = request
    .filter((field) => field.number === RESOURCE_ENTRY && field.body)
    .flatMap((resource) => fieldsOf(resource.body!).filter((field) => field.number === SCOPE_ENTRY && field.body))
    .reduce((sum, scope) => sum + fieldsOf(scope.body!).filter((field) => field.number === ITEM).length, 0);
  if (total < 2) return undefined;
  const firstHalf = Math.ceil(total / 2);
  let seen = 0;
  /** The part of `fields` in one half: other fields copied, items (and entries holding none of this half's) chosen. */
  const halfOf = (fields: Field[], depth: number, first: boolean): Uint8Array[] | undefined => {
    const parts: Uint8Array[] = [];
    let holdsItems = false;
    for (const field of fields) {
      const nested = depth < 2 && field.number === (depth === 0 ? RESOURCE_ENTRY : SCOPE_ENTRY) && field.body;
      if (depth === 2 && field.number === ITEM) {
        if ((seen++ < firstHalf) === first) {
          parts.push(field.raw);
          holdsItems = true;
        }
      } else if (nested) {
        const inner = halfOf(fieldsOf(field.body!), depth + 1, first);
        if (inner) {
          parts.push(lengthDelimited(field.number, inner));
          holdsItems = true;
        }
      } else {
        parts.push(field.raw);
      }
    }
    return holdsItems ? parts : undefined;
  };
  return [true, false].map((first) => {
    seen = 0;
    return { body: Buffer.concat(halfOf(request, 0, first) ?? []), items: first ? firstHalf : total - firstHalf };
  });
}
