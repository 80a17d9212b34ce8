// OTLP/protobuf request bodies (ExportTrace/Logs/MetricsServiceRequest) decoded into the shape OTLP/JSON has
// (camelCase names, hex ids, 64-bit integers as decimal strings), so the receiver reads one shape whatever the
// encoding. @opentelemetry/otlp-transformer only encodes requests (its reader decodes responses), and no
// protobuf library is a dependency: the messages are few, so they are described here by their field numbers
// (opentelemetry/proto/*/v1/*.proto) and read by one walker. Fields not described are skipped, as protobuf wants.

type Scalar = 'string' | 'bytes' | 'varint' | 'int64' | 'bool' | 'fixed64' | 'sfixed64' | 'double' | 'fixed32';
interface Field {
  name: string;
  type: Scalar | Schema;
  repeated?: boolean;
}
type Schema = Record<number, Field>;

const field = (name: string, type: Scalar | Schema, repeated = false): Field => ({ name, type, repeated });

const keyValue: Schema = {};
const anyValue: Schema = {
  1: field('stringValue', 'string'),
  2: field('boolValue', 'bool'),
  3: field('intValue', 'int64'),
  4: field('doubleValue', 'double'),
  5: field('arrayValue', { 1: field('values', {}, true) }),
  6: field('kvlistValue', { 1: field('values', keyValue, true) }),
  7: field('bytesValue', 'bytes'),
};
(anyValue[5].type as Schema)[1].type = anyValue;
Object.assign(keyValue, { 1: field('key', 'string'), 2: field('value', anyValue) });

const attributes = (number: number): Schema => ({ [number]: field('attributes', keyValue, true) });
const resource: Schema = { ...attributes(1), 2: field('droppedAttributesCount', 'varint') };
const scope: Schema = { 1: field('name', 'string'), 2: field('version', 'string'), ...attributes(3), 4: field('droppedAttributesCount', 'varint') };

/** ResourceX { resource, scopeX { scope, items } }: the envelope every signal shares. */
function request(resourceName: string, scopeName: string, itemsName: string, item: Schema): Schema {
  const scoped: Schema = { 1: field('scope', scope), 2: field(itemsName, item, true), 3: field('schemaUrl', 'string') };
  return { 1: field(resourceName, { 1: field('resource', resource), 2: field(scopeName, scoped, true), 3: field('schemaUrl', 'string') }, true) };
}

const span: Schema = {
  1: field('traceId', 'bytes'),
  2: field('spanId', 'bytes'),
  3: field('traceState', 'string'),
  4: field('parentSpanId', 'bytes'),
  5: field('name', 'string'),
  6: field('kind', 'varint'),
  7: field('startTimeUnixNano', 'fixed64'),
  8: field('endTimeUnixNano', 'fixed64'),
  ...attributes(9),
  11: field('events', { 1: field('timeUnixNano', 'fixed64'), 2: field('name', 'string'), ...attributes(3) }, true),
  13: field('links', { 1: field('traceId', 'bytes'), 2: field('spanId', 'bytes'), 3: field('traceState', 'string'), ...attributes(4), 6: field('flags', 'fixed32') }, true),
  15: field('status', { 2: field('message', 'string'), 3: field('code', 'varint') }),
  16: field('flags', 'fixed32'),
};

const logRecord: Schema = {
  1: field('timeUnixNano', 'fixed64'),
  11: field('observedTimeUnixNano', 'fixed64'),
  2: field('severityNumber', 'varint'),
  3: field('severityText', 'string'),
  5: field('body', anyValue),
  ...attributes(6),
  8: field('flags', 'fixed32'),
  9: field('traceId', 'bytes'),
  10: field('spanId', 'bytes'),
  12: field('eventName', 'string'),
};

/** The interval every data point has. */
const pointTimes: Schema = { 2: field('startTimeUnixNano', 'fixed64'), 3: field('timeUnixNano', 'fixed64') };
const numberPoint: Schema = {
  ...attributes(7),
  ...pointTimes,
  4: field('asDouble', 'double'),
  6: field('asInt', 'sfixed64'),
  8: field('flags', 'varint'),
};
const histogramPoint: Schema = {
  ...attributes(9),
  ...pointTimes,
  4: field('count', 'fixed64'),
  5: field('sum', 'double'),
  6: field('bucketCounts', 'fixed64', true),
  7: field('explicitBounds', 'double', true),
  10: field('flags', 'varint'),
  11: field('min', 'double'),
  12: field('max', 'double'),
};
const metric: Schema = {
  1: field('name', 'string'),
  2: field('description', 'string'),
  3: field('unit', 'string'),
  5: field('gauge', { 1: field('dataPoints', numberPoint, true) }),
  7: field('sum', { 1: field('dataPoints', numberPoint, true), 2: field('aggregationTemporality', 'varint'), 3: field('isMonotonic', 'bool') }),
  9: field('histogram', { 1: field('dataPoints', histogramPoint, true), 2: field('aggregationTemporality', 'varint') }),
  // Kept as present (empty) so the receiver can count their points as rejected.
  10: field('exponentialHistogram', { 1: field('dataPoints', {}, true) }),
  11: field('summary', { 1: field('dataPoints', {}, true) }),
};

export const OTLP_SCHEMAS = {
  traces: request('resourceSpans', 'scopeSpans', 'spans', span),
  logs: request('resourceLogs', 'scopeLogs', 'logRecords', logRecord),
  metrics: request('resourceMetrics', 'scopeMetrics', 'metrics', metric),
};

const WIRE = { varint: 0, fixed64: 1, length: 2, fixed32: 5 } as const;
const WIRE_OF: Record<Scalar, number> = {
  string: WIRE.length,
  bytes: WIRE.length,
  varint: WIRE.varint,
  int64: WIRE.varint,
  bool: WIRE.varint,
  fixed64: WIRE.fixed64,
  sfixed64: WIRE.fixed64,
  double: WIRE.fixed64,
  fixed32: WIRE.fixed32,
};

class Reader {
  pos = 0;
  private readonly view: DataView;
  private static readonly text = new TextDecoder('utf-8', { fatal: true });

  constructor(
    private readonly buf: Uint8Array,
    readonly end = buf.length,
  ) {
    this.view = new DataView(buf.buffer, buf.byteOffset, buf.byteLength);
  }

  varint(): bigint {
    let result = 0n;
    for (let shift = 0n; shift < 70n; shift += 7n) {
      if (this.pos >= this.end) throw new Error('truncated varint');
      const byte = this.buf[this.pos++];
      result |= BigInt(byte & 0x7f) << shift;
      if ((byte & 0x80) === 0) return result;
    }
    throw new Error('varint longer than 10 bytes');
  }

  take(length: number): Uint8Array {
    if (length < 0 || this.pos + length > this.end) throw new Error('truncated field');
    const bytes = this.buf.subarray(this.pos, this.pos + length);
    this.pos += length;
    return bytes;
  }

  fixed(width: 4 | 8): DataView {
    const at = this.pos;
    this.take(width);
    return new DataView(this.view.buffer, this.view.byteOffset + at, width);
  }

  string(bytes: Uint8Array): string {
    return Reader.text.decode(bytes);
  }
}

function scalar(reader: Reader, type: Scalar): unknown {
  switch (type) {
    case 'string':
      return reader.string(reader.take(Number(reader.varint())));
    case 'bytes':
      return Buffer.from(reader.take(Number(reader.varint()))).toString('hex');
    case 'varint':
      return Number(BigInt.asUintN(64, reader.varint()));
    case 'int64':
      return BigInt.asIntN(64, reader.varint()).toString();
    case 'bool':
      return reader.varint() !== 0n;
    case 'fixed64':
      return reader.fixed(8).getBigUint64(0, true).toString();
    case 'sfixed64':
      return reader.fixed(8).getBigInt64(0, true).toString();
    case 'double':
      return reader.fixed(8).getFloat64(0, true);
    case 'fixed32':
      return reader.fixed(4).getUint32(0, true);
  }
}

function skip(reader: Reader, wire: number): void {
  if (wire === WIRE.varint) reader.varint();
  else if (wire === WIRE.fixed64) reader.take(8);
  else if (wire === WIRE.length) reader.take(Number(reader.varint()));
  else if (wire === WIRE.fixed32) reader.take(4);
  else throw new Error(`unsupported wire type ${wire}`);
}

/** Nesting deeper than any OTLP message but an AnyValue can reach; a deeper one is an attack on the stack. */
const MAX_DEPTH = 32;

function message(reader: Reader, schema: Schema, depth: number): Record<string, unknown> {
  if (depth > MAX_DEPTH) throw new Error('message nested too deep');
  const out: Record<string, unknown> = {};
  while (reader.pos < reader.end) {
    const tag = Number(reader.varint());
    const [number, wire] = [tag >>> 3, tag & 7];
    const spec = schema[number];
    if (!spec) {
      skip(reader, wire);
      continue;
    }
    const values = () => (out[spec.name] ??= []) as unknown[];
    if (typeof spec.type === 'object') {
      if (wire !== WIRE.length) throw new Error(`field ${spec.name}: wire type ${wire} for a message`);
      const length = Number(reader.varint());
      const inner = new Reader(reader.take(length));
      const value = message(inner, spec.type, depth + 1);
      if (spec.repeated) values().push(value);
      else out[spec.name] = value;
    } else if (spec.repeated && wire === WIRE.length && WIRE_OF[spec.type] !== WIRE.length) {
      // A packed repeated scalar.
      const packed = new Reader(reader.take(Number(reader.varint())));
      while (packed.pos < packed.end) values().push(scalar(packed, spec.type));
    } else {
      if (wire !== WIRE_OF[spec.type]) throw new Error(`field ${spec.name}: wire type ${wire} for ${spec.type}`);
      const value = scalar(reader, spec.type);
      if (spec.repeated) values().push(value);
      else out[spec.name] = value;
    }
  }
  return out;
}

/** The request in OTLP/JSON's shape; throws on a body that is not a well-formed message of the signal's type. */
export function decodeOtlpProtobuf(signal: keyof typeof OTLP_SCHEMAS, body: Uint8Array): Record<string, unknown> {
  return message(new Reader(body), OTLP_SCHEMAS[signal], 0);
}
