// A protobuf wire-format reader for tests: enough to look inside the OTLP request bodies the sidecar
// writes, without trusting the code that wrote them.

export interface Field {
  wire: number;
  /** varint: bigint; fixed64/fixed32: the raw little-endian bytes; length-delimited: the bytes. */
  value: bigint | Uint8Array;
}

export class Message {
  readonly fields = new Map<number, Field[]>();

  constructor(bytes: Uint8Array) {
    let pos = 0;
    const varint = (): bigint => {
      let result = 0n;
      let shift = 0n;
      for (;;) {
        const byte = bytes[pos++];
        result |= BigInt(byte & 0x7f) << shift;
        if ((byte & 0x80) === 0) return result;
        shift += 7n;
      }
    };
    while (pos < bytes.length) {
      const key = Number(varint());
      const field = key >> 3;
      const wire = key & 7;
      let value: bigint | Uint8Array;
      if (wire === 0) value = varint();
      else if (wire === 1) value = bytes.subarray(pos, (pos += 8));
      else if (wire === 5) value = bytes.subarray(pos, (pos += 4));
      else if (wire === 2) {
        const length = Number(varint());
        value = bytes.subarray(pos, (pos += length));
      } else throw new Error(`unsupported wire type ${wire}`);
      const list = this.fields.get(field) ?? [];
      list.push({ wire, value });
      this.fields.set(field, list);
    }
  }

  private all(field: number): Field[] {
    return this.fields.get(field) ?? [];
  }

  has(field: number): boolean {
    return this.fields.has(field);
  }

  messages(field: number): Message[] {
    return this.all(field).map((f) => new Message(f.value as Uint8Array));
  }

  message(field: number): Message {
    const [first] = this.messages(field);
    if (!first) throw new Error(`no field ${field}`);
    return first;
  }

  string(field: number): string {
    const f = this.all(field)[0];
    return f ? Buffer.from(f.value as Uint8Array).toString('utf8') : '';
  }

  hex(field: number): string {
    const f = this.all(field)[0];
    return f ? Buffer.from(f.value as Uint8Array).toString('hex') : '';
  }

  varint(field: number): bigint {
    return (this.all(field)[0]?.value as bigint | undefined) ?? 0n;
  }

  fixed64(field: number): bigint {
    const f = this.all(field)[0];
    return f ? Buffer.from(f.value as Uint8Array).readBigUInt64LE() : 0n;
  }

  double(field: number): number {
    const f = this.all(field)[0];
    return f ? Buffer.from(f.value as Uint8Array).readDoubleLE() : 0;
  }

  packedDoubles(field: number): number[] {
    const bytes = Buffer.from((this.all(field)[0]?.value as Uint8Array | undefined) ?? new Uint8Array());
    return Array.from({ length: bytes.length / 8 }, (_, i) => bytes.readDoubleLE(i * 8));
  }

  packedFixed64(field: number): bigint[] {
    const bytes = Buffer.from((this.all(field)[0]?.value as Uint8Array | undefined) ?? new Uint8Array());
    return Array.from({ length: bytes.length / 8 }, (_, i) => bytes.readBigUInt64LE(i * 8));
  }
}

/** KeyValue list (common.proto) as a plain record: strings, numbers (int as number), booleans. */
export function keyValues(kvs: Message[]): Record<string, string | number | boolean> {
  const out: Record<string, string | number | boolean> = {};
  for (const kv of kvs) {
    const value = kv.message(2);
    if (value.has(1)) out[kv.string(1)] = value.string(1);
    else if (value.has(2)) out[kv.string(1)] = value.varint(2) === 1n;
    else if (value.has(3)) out[kv.string(1)] = Number(BigInt.asIntN(64, value.varint(3)));
    else if (value.has(4)) out[kv.string(1)] = value.double(4);
  }
  return out;
}
