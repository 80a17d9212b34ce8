// ClickHouse's RowBinary format for the rows ClickHouseSink inserts: each row its columns' values one after another, in
// the binary form of each column's type, which the engine copies into its columns with next to no parsing (it parsed
// JSON rows at about a third of the floor's speed). The column types are the table's own (system.columns), so a row
// is written as the store's schema says. A value is taken as the JSON rows took it: a missing one (undefined, null)
// or a number that is not finite is the type's default, a number or boolean in a String column its text.
import { writeHrTimeAsFixed64 } from '@opentelemetry/otlp-transformer/build/src/common/protobuf/common-serializer.js';
import type { ByteWriter } from './byte-writer.js';
import { StoreTime } from './clickhouse-rows.js';

export type ValueWriter = (writer: ByteWriter, value: unknown) => void;

const writeText: ValueWriter = (writer, value) => writer.writeString(typeof value === 'string' ? value : value == null ? '' : String(value));
const finite = (value: unknown): number => (typeof value === 'number' && Number.isFinite(value) ? value : typeof value === 'boolean' ? Number(value) : 0);
const writeUnsigned64: ValueWriter = (writer, value) => {
  const number = Math.max(0, Math.trunc(finite(value)));
  writer.writeFixed64(number >>> 0, Math.floor(number / 0x100000000));
};
const epochMs = (value: unknown): number => (value instanceof StoreTime ? value.ms : finite(value));

const SCALARS: Record<string, ValueWriter> = {
  String: writeText,
  Bool: (writer, value) => writer.writeUint8(value ? 1 : 0),
  UInt8: (writer, value) => writer.writeUint8(finite(value)),
  UInt32: (writer, value) => writer.writeFixed32(finite(value)),
  Int32: (writer, value) => writer.writeFixed32(finite(value) | 0),
  UInt64: writeUnsigned64,
  Float64: (writer, value) => writer.writeDouble(finite(value)),
  // Seconds since the epoch, UInt32.
  DateTime: (writer, value) => writer.writeFixed32(Math.floor(epochMs(value) / 1000)),
  // Nanoseconds since the epoch, Int64: the whole milliseconds and the rest rounded to the nanosecond, as the rows' text
  // `…ss.mmmuuunnn` said it.
  'DateTime64(9)': (writer, value) => {
    const ms = epochMs(value);
    const whole = Math.floor(ms);
    const seconds = Math.floor(whole / 1000);
    writeHrTimeAsFixed64(writer, [seconds, (whole - seconds * 1000) * 1_000_000 + Math.round((ms - whole) * 1e6)]);
  },
};

/** How a value of a ClickHouse column type is written; an error names a type ccotel's tables do not use. */
export function valueWriter(type: string): ValueWriter {
  const scalar = SCALARS[type];
  if (scalar) return scalar;
  const inner = /^(\w+)\((.*)\)$/.exec(type);
  if (inner?.[1] === 'LowCardinality') return valueWriter(inner[2]);
  if (inner?.[1] === 'Array') {
    const element = valueWriter(inner[2]);
    return (writer, value) => {
      const items = Array.isArray(value) ? value : [];
      writer.writeVarint(items.length);
      for (const item of items) element(writer, item);
    };
  }
  if (inner?.[1] === 'Map') {
    const [keyType, valueType] = splitTypes(inner[2]);
    const [key, entry] = [valueWriter(keyType), valueWriter(valueType)];
    return (writer, value) => {
      const map = (value ?? {}) as Record<string, unknown>;
      const keys = Object.keys(map);
      writer.writeVarint(keys.length);
      for (const name of keys) {
        key(writer, name);
        entry(writer, map[name]);
      }
    };
  }
  throw new Error(`no RowBinary writer for the ClickHouse type ${type}`);
}

/** `LowCardinality(String), String` → its two types (commas inside parentheses are the first's). */
function splitTypes(list: string): [string, string] {
  let depth = 0;
  for (let i = 0; i < list.length; i++) {
    if (list[i] === '(') depth++;
    else if (list[i] === ')') depth--;
    else if (list[i] === ',' && depth === 0) return [list.slice(0, i).trim(), list.slice(i + 1).trim()];
  }
  throw new Error(`not two types: ${list}`);
}

/** Writes a row's values (in its columns' order) with its columns' writers. */
export function writeRow(writer: ByteWriter, writers: readonly ValueWriter[], values: readonly unknown[]): void {
  for (let i = 0; i < writers.length; i++) writers[i](writer, values[i]);
}
