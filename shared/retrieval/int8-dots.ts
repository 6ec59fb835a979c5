import type { PackedVectors } from './packed-vectors.ts';

// The dense ranking's inner loop in WebAssembly SIMD: the dot products of one query with every
// int8 row of a pack. Plain JavaScript multiplies one element at a time (about 50 ms for 10,000
// rows of 1,536 dimensions on these machines); SIMD takes 16 elements per step. The query is
// scaled to int16 so each step is two `i32x4.dot_i16x8_s` — exact integer arithmetic, with the
// query's rounding (about 1e-4 of its largest value) far below what the int8 rows already lose.
// The rows are copied into the module's memory when a pack is ranked that is not the one copied
// last (a memcpy, a few ms at most); where WebAssembly SIMD is missing, topK keeps its JS loop.

/** The module, assembled here (each step of the function commented beside its bytes) rather than shipped as an opaque blob. */
function moduleBytes(): Uint8Array {
  const u32 = (n: number): number[] => {
    const out: number[] = [];
    do {
      let b = n & 0x7f;
      n >>>= 7;
      if (n) b |= 0x80;
      out.push(b);
    } while (n);
    return out;
  };
  const i32Const = (n: number) => [0x41, ...u32(n)]; // small non-negative constants: LEB128 = SLEB128 below 64
  const str = (s: string) => [...u32(s.length), ...Buffer.from(s)];
  const section = (id: number, bytes: number[]) => [id, ...u32(bytes.length), ...bytes];
  const vec = (items: number[][]) => [...u32(items.length), ...items.flat()];
  const simd = (op: number) => [0xfd, ...u32(op)];
  const get = (i: number) => [0x20, i];
  const set = (i: number) => [0x21, i];
  const I32 = 0x7f;
  const V128 = 0x7b;
  // Parameters and locals.
  const [q, data, count, dims, out, i, row, d, sum, acc, v] = [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10];
  const i32Add = [0x6a];
  const qAt = [...get(q), ...get(d), ...i32Const(1), 0x74, ...i32Add]; // q + 2·d (int16 query)

  // dots(q, data, count, dims, out): out[i] = Σ_d data[i·dims + d] · q[d], for i < count.
  const body = [
    0x02,
    0x40, // block $done
    ...get(count),
    0x45,
    0x0d,
    0, // br_if $done (count == 0)
    0x03,
    0x40, // loop $rows
    ...get(data),
    ...get(i),
    ...get(dims),
    0x6c,
    ...i32Add,
    ...set(row), // row = data + i·dims
    ...i32Const(0),
    ...simd(0x11),
    ...set(acc), // acc = i32x4(0)
    ...i32Const(0),
    ...set(d),
    0x02,
    0x40,
    0x03,
    0x40, // block $simdEnd, loop $simd
    ...get(d),
    ...i32Const(16),
    ...i32Add,
    ...get(dims),
    0x4b,
    0x0d,
    1, // br_if $simdEnd (d + 16 > dims)
    ...get(row),
    ...get(d),
    ...i32Add,
    ...simd(0x00),
    0,
    0,
    ...set(v), // v = 16 int8 of the row
    ...get(acc),
    ...get(v),
    ...simd(0x87),
    ...qAt,
    ...simd(0x00),
    0,
    0,
    ...simd(0xba),
    ...simd(0xae), // acc += dot(low 8 as i16, q[d..d+8])
    ...get(v),
    ...simd(0x88),
    ...qAt,
    ...simd(0x00),
    0,
    16,
    ...simd(0xba),
    ...simd(0xae), // acc += dot(high 8, q[d+8..d+16])
    ...set(acc),
    ...get(d),
    ...i32Const(16),
    ...i32Add,
    ...set(d),
    0x0c,
    0, // br $simd
    0x0b,
    0x0b, // end loop, end block
    ...get(acc),
    ...simd(0x1b),
    0, // sum = the four lanes
    ...get(acc),
    ...simd(0x1b),
    1,
    ...i32Add,
    ...get(acc),
    ...simd(0x1b),
    2,
    ...i32Add,
    ...get(acc),
    ...simd(0x1b),
    3,
    ...i32Add,
    ...set(sum),
    0x02,
    0x40,
    0x03,
    0x40, // block $tailEnd, loop $tail (dims not a multiple of 16)
    ...get(d),
    ...get(dims),
    0x4f,
    0x0d,
    1, // br_if $tailEnd (d >= dims)
    ...get(sum),
    ...get(row),
    ...get(d),
    ...i32Add,
    0x2c,
    0,
    0,
    ...qAt,
    0x2e,
    1,
    0,
    0x6c,
    ...i32Add,
    ...set(sum),
    ...get(d),
    ...i32Const(1),
    ...i32Add,
    ...set(d),
    0x0c,
    0, // br $tail
    0x0b,
    0x0b,
    ...get(out),
    ...get(i),
    ...i32Const(2),
    0x74,
    ...i32Add,
    ...get(sum),
    0x36,
    2,
    0, // out[i] = sum
    ...get(i),
    ...i32Const(1),
    ...i32Add,
    0x22,
    i,
    ...get(count),
    0x49,
    0x0d,
    0, // br_if $rows (++i < count)
    0x0b, // end loop
    0x0b, // end block
    0x0b, // end function
  ];
  const locals = vec([
    [...u32(4), I32], // i, row, d, sum
    [...u32(2), V128], // acc, v
  ]);
  const code = [...locals, ...body];
  return Uint8Array.from([
    0x00,
    0x61,
    0x73,
    0x6d,
    0x01,
    0x00,
    0x00,
    0x00, // "\0asm", version 1
    ...section(1, vec([[0x60, ...vec([[I32], [I32], [I32], [I32], [I32]]), 0]])), // type: (i32 ×5) → ()
    ...section(2, vec([[...str('env'), ...str('memory'), 0x02, 0x00, 1]])), // import env.memory (min 1 page)
    ...section(3, vec([[0]])), // one function of type 0
    ...section(7, vec([[...str('dots'), 0x00, 0]])), // export it as "dots"
    ...section(10, vec([[...u32(code.length), ...code]])),
  ]);
}

// The parts of the WebAssembly JS API used here (the project's TypeScript libs have no DOM types).
interface WasmMemory {
  readonly buffer: ArrayBuffer;
  grow(pages: number): number;
}
interface WasmApi {
  Memory: new (descriptor: { initial: number }) => WasmMemory;
  Module: new (bytes: Uint8Array) => object;
  Instance: new (module: object, imports: object) => { exports: Record<string, unknown> };
}
const wasm = (globalThis as unknown as { WebAssembly: WasmApi }).WebAssembly;

const PAGE = 65_536;
const align16 = (n: number) => (n + 15) & ~15;

interface Kernel {
  memory: WasmMemory;
  dots: (q: number, data: number, count: number, dims: number, out: number) => void;
  /** The rows now in memory at offset 0, so ranking the same pack again copies nothing. */
  loaded?: WeakRef<Int8Array>;
}

let kernel: Kernel | null | undefined;

function instantiate(): Kernel | null {
  try {
    const memory = new wasm.Memory({ initial: 1 });
    const instance = new wasm.Instance(new wasm.Module(moduleBytes()), { env: { memory } });
    return { memory, dots: instance.exports.dots as Kernel['dots'] };
  } catch {
    return null; // no WebAssembly SIMD here: the caller ranks in JavaScript
  }
}

/** Whether the SIMD kernel runs on this platform (Node ≥ 16.4 on x64 and arm64). */
export function simdAvailable(): boolean {
  kernel ??= instantiate();
  return kernel !== null;
}

/**
 * The dot product of `query` with each row of the pack (in the rows' int8 units, like
 * Σ query[d] · data[d]), or undefined where the kernel does not run.
 */
export function int8Dots(pack: PackedVectors, query: Float32Array): Float64Array | undefined {
  kernel ??= instantiate();
  if (!kernel) return undefined;
  const { count, dimensions: dims, data } = pack;
  if (count === 0 || dims === 0) return new Float64Array(count);
  // Scale the query to int16 as far as the sums allow: Σ of dims products of 127 · qMax < 2^31.
  let maxAbs = 0;
  for (const x of query) maxAbs = Math.max(maxAbs, Math.abs(x));
  if (maxAbs === 0) return new Float64Array(count);
  const qMax = Math.min(32_767, Math.floor((2 ** 31 - 1) / (127 * dims)));
  const qScale = qMax / maxAbs;

  const qAt = align16(data.byteLength);
  const outAt = align16(qAt + dims * 2);
  const needed = outAt + count * 4;
  const { memory } = kernel;
  if (memory.buffer.byteLength < needed) {
    memory.grow(Math.ceil((needed - memory.buffer.byteLength) / PAGE));
    kernel.loaded = undefined;
  }
  if (kernel.loaded?.deref() !== data) {
    new Int8Array(memory.buffer, 0, data.byteLength).set(data);
    kernel.loaded = new WeakRef(data);
  }
  const q16 = new Int16Array(memory.buffer, qAt, dims);
  for (let d = 0; d < dims; d++) q16[d] = Math.round(query[d]! * qScale);
  kernel.dots(qAt, 0, count, dims, outAt);
  const sums = new Int32Array(memory.buffer, outAt, count);
  const dots = new Float64Array(count);
  for (let r = 0; r < count; r++) dots[r] = sums[r]! / qScale;
  return dots;
}
