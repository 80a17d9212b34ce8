// ClickHouse's own compressed-block framing, as its HTTP interface speaks it with `compress=1` (answers) and
// `decompress=1` (request bodies), and as clickhouse-go v2 (ch-go's compress package) writes and checks it:
//
//   [16 bytes CityHash128 v1.0.2 of the rest] [1 byte method] [u32 LE size of method+sizes+payload]
//   [u32 LE size of the decompressed data] [payload]
//
// Methods: 0x02 none, 0x82 LZ4 (a raw LZ4 block), 0x90 ZSTD (a zstd frame). For tests only
// (test/helpers/clickhouse-http-front.ts); the checksum is checked as a ClickHouse server checks it.
import { compressSync as lz4CompressSizePrepended, uncompressSync as lz4UncompressSizePrepended } from 'lz4-napi';
import { decompress as zstdDecompress } from 'fzstd';

const METHOD_NONE = 0x02;
const METHOD_LZ4 = 0x82;
const METHOD_ZSTD = 0x90;
const CHECKSUM_BYTES = 16;
const HEADER_BYTES = CHECKSUM_BYTES + 9;
/** ch-go's bound: no frame above 128 MiB either way. */
const MAX_FRAME_BYTES = 128 * 1024 * 1024;

export class CompressedFrameError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'CompressedFrameError';
  }
}

/** Decodes a body of consecutive frames into the bytes they carry; throws CompressedFrameError on anything else. */
export function decodeFrames(body: Buffer): Buffer {
  const parts: Buffer[] = [];
  for (let at = 0; at < body.length; ) {
    if (body.length - at < HEADER_BYTES) throw new CompressedFrameError(`truncated frame header at byte ${at}`);
    const method = body[at + CHECKSUM_BYTES]!;
    const framedSize = body.readUInt32LE(at + CHECKSUM_BYTES + 1);
    const dataSize = body.readUInt32LE(at + CHECKSUM_BYTES + 5);
    if (framedSize < 9 || framedSize > MAX_FRAME_BYTES || dataSize > MAX_FRAME_BYTES) {
      throw new CompressedFrameError(`frame at byte ${at}: sizes ${framedSize}/${dataSize} out of bounds`);
    }
    const end = at + CHECKSUM_BYTES + framedSize;
    if (end > body.length) throw new CompressedFrameError(`truncated frame at byte ${at}`);
    const framed = body.subarray(at + CHECKSUM_BYTES, end);
    if (!cityHash128(framed).equals(body.subarray(at, at + CHECKSUM_BYTES))) {
      throw new CompressedFrameError(`checksum mismatch in the frame at byte ${at}`);
    }
    const payload = framed.subarray(9);
    let data: Buffer;
    if (method === METHOD_NONE) data = payload;
    else if (method === METHOD_LZ4) data = lz4UncompressSizePrepended(Buffer.concat([u32(dataSize), payload]));
    else if (method === METHOD_ZSTD) data = Buffer.from(zstdDecompress(payload));
    else throw new CompressedFrameError(`frame at byte ${at}: method 0x${method.toString(16)} is not supported`);
    if (data.length !== dataSize) throw new CompressedFrameError(`frame at byte ${at}: ${data.length} bytes, header says ${dataSize}`);
    parts.push(data);
    at = end;
  }
  return Buffer.concat(parts);
}

/** Frames `data` (one LZ4 frame per MiB), as a server answers a `compress=1` request. */
export function encodeFrames(data: Buffer): Buffer {
  const frames: Buffer[] = [];
  for (let at = 0; at < data.length || frames.length === 0; at += 1 << 20) {
    const chunk = data.subarray(at, at + (1 << 20));
    const block = lz4CompressSizePrepended(chunk).subarray(4); // lz4-napi prepends the size; the frame carries it itself
    const framed = Buffer.concat([Buffer.from([METHOD_LZ4]), u32(9 + block.length), u32(chunk.length), block]);
    frames.push(cityHash128(framed), framed);
  }
  return Buffer.concat(frames);
}

function u32(value: number): Buffer {
  const buffer = Buffer.alloc(4);
  buffer.writeUInt32LE(value);
  return buffer;
}

// CityHash128 as of CityHash v1.0.2, the version ClickHouse froze for these checksums (later versions differ).
// A port of github.com/go-faster/city's CH128, the one clickhouse-go checks with, in 64-bit BigInt arithmetic.
const MASK = (1n << 64n) - 1n;
const K0 = 0xc3a5c85c97cb3127n;
const K1 = 0xb492b66fbe98f273n;
const K2 = 0x9ae16a3b2f90404fn;
const K3 = 0xc949d7c7509e6557n;
const KMUL = 0x9ddfea08eb382d69n;

const mul = (a: bigint, b: bigint) => (a * b) & MASK;
const add = (...values: bigint[]) => values.reduce((sum, value) => (sum + value) & MASK, 0n);
const rot = (value: bigint, shift: bigint) => (shift === 0n ? value : ((value >> shift) | (value << (64n - shift))) & MASK);
const shiftMix = (value: bigint) => value ^ (value >> 47n);

function hash16(u: bigint, v: bigint): bigint {
  let a = mul(u ^ v, KMUL);
  a ^= a >> 47n;
  let b = mul(v ^ a, KMUL);
  b ^= b >> 47n;
  return mul(b, KMUL);
}

type U128 = [low: bigint, high: bigint];

function weakHash32(s: Buffer, at: number, a: bigint, b: bigint): U128 {
  const [w, x, y, z] = [0, 8, 16, 24].map((offset) => s.readBigUInt64LE(at + offset)) as [bigint, bigint, bigint, bigint];
  a = add(a, w);
  b = rot(add(b, a, z), 21n);
  const c = a;
  a = add(a, x, y);
  b = add(b, rot(a, 44n));
  return [add(a, z), add(b, c)];
}

function hash0to16(s: Buffer, at: number, length: number): bigint {
  const len = BigInt(length);
  if (length > 8) {
    const a = s.readBigUInt64LE(at);
    const b = s.readBigUInt64LE(at + length - 8);
    return hash16(a, rot(add(b, len), len)) ^ b;
  }
  if (length >= 4) return hash16(add(len, BigInt(s.readUInt32LE(at)) << 3n), BigInt(s.readUInt32LE(at + length - 4)));
  if (length > 0) {
    const y = BigInt(s[at]! + (s[at + (length >> 1)]! << 8));
    const z = BigInt(length + (s[at + length - 1]! << 2));
    return mul(shiftMix(mul(y, K2) ^ mul(z, K3)), K2);
  }
  return K2;
}

function murmur(s: Buffer, at: number, length: number, [seedLow, seedHigh]: U128): U128 {
  let a = seedLow;
  let b = seedHigh;
  let c: bigint;
  let d: bigint;
  if (length <= 16) {
    a = mul(shiftMix(mul(a, K1)), K1);
    c = add(mul(b, K1), hash0to16(s, at, length));
    d = shiftMix(add(a, length >= 8 ? s.readBigUInt64LE(at) : c));
  } else {
    c = hash16(add(s.readBigUInt64LE(at + length - 8), K1), a);
    d = hash16(add(b, BigInt(length)), add(c, s.readBigUInt64LE(at + length - 16)));
    a = add(a, d);
    for (let left = length - 16; ; ) {
      a ^= mul(shiftMix(mul(s.readBigUInt64LE(at), K1)), K1);
      a = mul(a, K1);
      b ^= a;
      c ^= mul(shiftMix(mul(s.readBigUInt64LE(at + 8), K1)), K1);
      c = mul(c, K1);
      d ^= c;
      at += 16;
      left -= 16;
      if (left <= 0) break;
    }
  }
  a = hash16(a, c);
  b = hash16(d, b);
  return [a ^ b, hash16(b, a)];
}

function hash128WithSeed(s: Buffer, start: number, length: number, seed: U128): U128 {
  if (length < 128) return murmur(s, start, length, seed);
  const end = start + length;
  let [x, y] = seed;
  let z = mul(BigInt(length), K1);
  let v: U128 = [0n, 0n];
  v[0] = add(mul(rot(y ^ K1, 49n), K1), s.readBigUInt64LE(start));
  v[1] = add(mul(rot(v[0], 42n), K1), s.readBigUInt64LE(start + 8));
  let w: U128 = [add(mul(rot(add(y, z), 35n), K1), x), mul(rot(add(x, s.readBigUInt64LE(start + 88)), 53n), K1)];
  let at = start;
  for (; end - at >= 128; ) {
    for (let roll = 0; roll < 2; roll++, at += 64) {
      x = mul(rot(add(x, y, v[0], s.readBigUInt64LE(at + 16)), 37n), K1);
      y = mul(rot(add(y, v[1], s.readBigUInt64LE(at + 48)), 42n), K1);
      x ^= w[1];
      y ^= v[0];
      z = rot(z ^ w[0], 33n);
      v = weakHash32(s, at, mul(v[1], K1), add(x, w[0]));
      w = weakHash32(s, at + 32, add(z, w[1]), y);
      [z, x] = [x, z];
    }
  }
  y = add(y, mul(rot(w[0], 37n), K0), z);
  x = add(x, mul(rot(add(v[0], z), 49n), K0));
  for (let done = 0; done < end - at; ) {
    done += 32;
    y = add(mul(rot((y - x) & MASK, 42n), K0), v[1]);
    w[0] = add(w[0], s.readBigUInt64LE(end - done + 16));
    x = add(mul(rot(x, 49n), K0), w[0]);
    w[0] = add(w[0], v[0]);
    v = weakHash32(s, end - done, v[0], v[1]);
  }
  x = hash16(x, v[0]);
  y = hash16(y, w[0]);
  return [add(hash16(add(x, v[1]), w[1]), y), hash16(add(x, w[1]), add(y, v[1]))];
}

/** The 16 checksum bytes (low half first, each little-endian) ClickHouse puts before a frame. */
export function cityHash128(s: Buffer): Buffer {
  let hash: U128;
  if (s.length >= 16) hash = hash128WithSeed(s, 16, s.length - 16, [s.readBigUInt64LE(0) ^ K3, s.readBigUInt64LE(8)]);
  else if (s.length >= 8) {
    const len = BigInt(s.length);
    hash = hash128WithSeed(s, 0, 0, [s.readBigUInt64LE(0) ^ mul(len, K0), s.readBigUInt64LE(s.length - 8) ^ K1]);
  } else hash = hash128WithSeed(s, 0, s.length, [K0, K1]);
  const out = Buffer.alloc(16);
  out.writeBigUInt64LE(hash[0], 0);
  out.writeBigUInt64LE(hash[1], 8);
  return out;
}
