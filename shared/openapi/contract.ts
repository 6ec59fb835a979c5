import type { z } from 'zod/mini';

// The schemas are zod/mini's (see shared/zod.ts).
type Schema = z.ZodMiniType;

/** What the OpenAPI document says about one route; the zod schemas are the ones the code uses. */
export interface RouteContract {
  summary: string;
  description?: string;
  body?: Schema;
  params?: Schema;
  query?: Schema;
  /** Success statuses and the schema of the payload (`data` of the envelope, or the bare body). */
  responses: Partial<Record<200 | 201 | 202 | 204, Schema | null>>;
  /** Error statuses this route can answer. */
  errors: number[];
  /** Success content types other than JSON: the SSE stream, beside the JSON response or (`only`) instead of it. */
  streams?: boolean | 'only';
  /**
   * A file to download instead of a JSON body (the handler's `attachment`): its media types, each
   * with the schema of its content (null: text); the response carries content-disposition.
   */
  attachment?: Record<string, Schema | null>;
  /** Response headers worth naming (e.g. x-next-cursor). */
  headers?: string[];
}

/** By route name (shared/<domain>/routes.ts); the OpenAPI generator refuses a name the manifest lacks. */
export type RouteContracts = Record<string, RouteContract>;

/** Schemas the OpenAPI document names as components (`#/components/schemas/<name>`). */
export type NamedSchemas = Record<string, Schema>;
