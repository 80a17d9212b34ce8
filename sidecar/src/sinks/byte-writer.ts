// A growing byte buffer with the few encodings ccotel writes by hand: protobuf (OTLP requests, otlp-convert.ts) and
// ClickHouse RowBinary (row-binary.ts) share them — little-endian fixed-width numbers, LEB128 lengths, UTF-8 strings
// prefixed by their byte length. It has the method names of @opentelemetry/otlp-transformer's ProtobufWriter, so that
// package's attribute, resource and scope writers write into it; unlike that writer, strings are encoded by Node's
// native UTF-8 encoder instead of a JavaScript loop over every character, and nothing is written twice to size it.
import type { IProtobufWriter } from '@opentelemetry/otlp-transformer/build/src/common/protobuf/i-protobuf-writer.js';

/** Bytes a length-delimited field reserves for its length: most messages are shorter than 128 bytes. */
const RESERVED_LENGTH_BYTES = 1;

export class ByteWriter implements IProtobufWriter {
  pos = 0;
  private buffer: Buffer;

  constructor(initialBytes = 64 * 1024) {
    this.buffer = Buffer.allocUnsafe(initialBytes);
  }

  /** The bytes written (a view of the buffer: valid until the writer writes again). */
  finish(): Buffer {
    return this.buffer.subarray(0, this.pos);
  }

  private ensure(bytes: number): void {
    const needed = this.pos + bytes;
    if (needed <= this.buffer.length) return;
    let size = this.buffer.length * 2;
    while (size < needed) size *= 2;
    const grown = Buffer.allocUnsafe(size);
    this.buffer.copy(grown, 0, 0, this.pos);
    this.buffer = grown;
  }

  writeTag(fieldNumber: number, wireType: number): void {
    this.writeVarint((fieldNumber << 3) | wireType);
  }

  /** An unsigned LEB128 integer: non-negative, below 2^53 (a negative one as protobuf's 64-bit two's complement). */
  writeVarint(value: number): void {
    this.ensure(10);
    if (value >= 0 && value <= 0xffffffff) {
      let v = value >>> 0;
      while (v > 0x7f) {
        this.buffer[this.pos++] = (v & 0x7f) | 0x80;
        v >>>= 7;
      }
      this.buffer[this.pos++] = v;
      return;
    }
    let [low, high] = int64Words(value);
    while (high > 0 || low > 0x7f) {
      this.buffer[this.pos++] = (low & 0x7f) | 0x80;
      low = ((low >>> 7) | (high << 25)) >>> 0;
      high >>>= 7;
    }
    this.buffer[this.pos++] = low;
  }

  writeSint32(value: number): void {
    this.writeVarint(((value << 1) ^ (value >> 31)) >>> 0);
  }

  writeSfixed64(value: number): void {
    const [low, high] = int64Words(value);
    this.writeFixed64(low, high);
  }

  writeUint8(value: number): void {
    this.ensure(1);
    this.buffer[this.pos++] = value;
  }

  writeFixed32(value: number): void {
    this.ensure(4);
    this.buffer.writeUInt32LE(value >>> 0, this.pos);
    this.pos += 4;
  }

  writeFixed64(low: number, high: number): void {
    this.ensure(8);
    this.buffer.writeUInt32LE(low >>> 0, this.pos);
    this.buffer.writeUInt32LE(high >>> 0, this.pos + 4);
    this.pos += 8;
  }

  writeDouble(value: number): void {
    this.ensure(8);
    this.buffer.writeDoubleLE(value, this.pos);
    this.pos += 8;
  }

  writeBytes(bytes: Uint8Array): void {
    this.writeVarint(bytes.length);
    this.ensure(bytes.length);
    this.buffer.set(bytes, this.pos);
    this.pos += bytes.length;
  }

  /** Its UTF-8 bytes after their length (a lone surrogate becomes U+FFFD, as TextEncoder writes it). */
  writeString(text: string): void {
    // At most 3 bytes a UTF-16 unit: a string that cannot reach 128 bytes has a one-byte length, written after it.
    if (text.length < 43) {
      this.ensure(1 + text.length * 3);
      const length = this.buffer.write(text, this.pos + 1, 'utf8');
      this.buffer[this.pos] = length;
      this.pos += 1 + length;
      return;
    }
    const length = Buffer.byteLength(text, 'utf8');
    this.writeVarint(length);
    this.ensure(length);
    this.pos += this.buffer.write(text, this.pos, 'utf8');
  }

  /** Reserves a length for the message written next; finishLengthDelimited fills it. */
  startLengthDelimited(): number {
    this.ensure(RESERVED_LENGTH_BYTES);
    const at = this.pos;
    this.pos += RESERVED_LENGTH_BYTES;
    return at;
  }

  finishLengthDelimited(at: number, length: number): void {
    const size = varintSize(length);
    if (size > RESERVED_LENGTH_BYTES) {
      this.ensure(size - RESERVED_LENGTH_BYTES);
      this.buffer.copyWithin(at + size, at + RESERVED_LENGTH_BYTES, this.pos);
      this.pos += size - RESERVED_LENGTH_BYTES;
    }
    let v = length >>> 0;
    let to = at;
    while (v > 0x7f) {
      this.buffer[to++] = (v & 0x7f) | 0x80;
      v >>>= 7;
    }
    this.buffer[to] = v;
  }
}

function varintSize(value: number): number {
  let size = 1;
  for (let v = value >>> 0; v > 0x7f; v >>>= 7) size++;
  return size;
}

/** The low and high 32 bits of an integer as a 64-bit two's complement. */
function int64Words(value: number): [number, number] {
  const magnitude = Math.abs(value);
  let low = magnitude >>> 0;
  let high = Math.floor(magnitude / 0x100000000) >>> 0;
  if (value < 0) {
    low = ~low >>> 0;
    high = ~high >>> 0;
    low = (low + 1) >>> 0;
    if (low === 0) high = (high + 1) >>> 0;
  }
  return [low, high];
}
