import type { Metadata } from './vector-slots.ts';

// The service's documented limits and errors, and the checks of a request's values against them.

export const LIMITS = {
  maxDimension: 4096,
  maxTopK: 100,
  maxPut: 500,
  maxDelete: 500,
  maxGet: 100,
  maxListPage: 1000,
  maxKeyLength: 1024,
  maxMetadataBytes: 40 * 1024,
  maxFilterableMetadataBytes: 2 * 1024,
  maxMetadataKeys: 50,
  maxNonFilterableKeys: 10,
  maxSegments: 16,
  maxRequestBytes: 20 * 1024 * 1024,
} as const;

export class ApiError extends Error {
  constructor(
    readonly type: string,
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}
export const invalid = (message: string) => new ApiError('ValidationException', 400, message);
export const notFound = (message: string) => new ApiError('NotFoundException', 404, message);
export const conflict = (message: string) => new ApiError('ConflictException', 409, message);

/** Vector bucket and index names: 3–63 lowercase letters, digits, hyphens (indexes: dots too), a letter or digit at each end. */
export const BUCKET_NAME = /^[a-z0-9][a-z0-9-]{1,61}[a-z0-9]$/;
export const INDEX_NAME = /^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/;

export const arn = (bucket: string, index?: string) =>
  `arn:aws:s3vectors:us-east-1:000000000000:bucket/${bucket}${index ? `/index/${index}` : ''}`;

export function metadataBytes(metadata: Metadata, keys: string[]): number {
  let bytes = 0;
  for (const k of keys) bytes += Buffer.byteLength(k) + Buffer.byteLength(JSON.stringify(metadata[k]));
  return bytes;
}

export function checkMetadataValue(key: string, value: unknown) {
  const scalar = (v: unknown) =>
    typeof v === 'string' || typeof v === 'boolean' || (typeof v === 'number' && Number.isFinite(v));
  if (scalar(value)) return;
  if (Array.isArray(value) && value.length > 0 && value.every((v) => typeof v === 'string')) return;
  throw invalid(`Invalid metadata value for key '${key}': a string, number, boolean or non-empty list of strings`);
}

export function float32Of(data: unknown, dimension: number, what: string): Float32Array {
  const values = (data as { float32?: unknown } | undefined)?.float32;
  if (!Array.isArray(values)) throw invalid(`${what}: data.float32 is required`);
  if (values.length !== dimension)
    throw invalid(`${what}: dimension ${values.length} does not match the index's dimension ${dimension}`);
  if (!values.every((v) => typeof v === 'number' && Number.isFinite(v)))
    throw invalid(`${what}: values must be finite numbers`);
  return Float32Array.from(values as number[]);
}

export function int(body: Record<string, unknown>, name: string, min: number, max: number, fallback?: number): number {
  const v = body[name] ?? fallback;
  if (v === undefined) throw invalid(`${name} is required`);
  if (typeof v !== 'number' || !Number.isInteger(v) || v < min || v > max)
    throw invalid(`${name} must be an integer between ${min} and ${max}`);
  return v;
}
