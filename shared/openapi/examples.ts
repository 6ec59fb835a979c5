import * as z from '../zod.ts';

// Example values for the OpenAPI document (what /docs shows instead of "string"): attached to
// the schemas themselves with `example(value)`, so the document carries them, and checked by
// test/unit/openapi-examples.test.ts to parse with the schema they illustrate.

/** Marks a schema with one example value (JSON Schema `examples`). */
export const example = (value: unknown) => z.meta({ examples: [value] });

/** Ids that read as the service's own (CUID2), shared by the examples so they refer to each other. */
export const EXAMPLE_IDS = {
  user: 'u2b7c4d9e1f6g3h8j5k0m7np',
  chat: 'c8f2k4m9p1q7r3t5v6w0x2yz',
  fileChat: 'c3d6f9h2k5m8p1r4t7w0y3ab',
  file: 'f5h8j2k6m3n9p4q7r1s0t8uv',
  userMessage: 'm1a5b9c3d7e2f6g0h4j8k2lq',
  reply: 'm4n8p2q6r9s3t7v1w5x0y4za',
  product: 'p7q2r6s1t5v9w3x8y4z0a6bc',
  order: 'o9r4d2e7r1s5t8u3v6w0x4yz',
  export: 'e2x7p4o9r1t6s3a8b5c0d2fg',
  collection: 'k6l1m8n3p5q9r2s7t4v0w6xa',
  apiKey: 'a3k7e9y2b5c8d1f4g6h0j3mn',
} as const;

export const EXAMPLE_TIME = '2026-11-24T09:30:00.000Z';
