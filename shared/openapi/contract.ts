import type { z } from 'zod/mini';

// The schemas are zod/mini's (see shared/zod.ts).
type Schema = z.ZodMiniType;
import type { HttpRouteName } from '../../infra/routes.ts';

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
  /** Success content types other than JSON (the SSE stream). */
  streams?: boolean;
  /** Response headers worth naming (e.g. x-next-cursor). */
  headers?: string[];
}

export type RouteContracts = Partial<Record<HttpRouteName, RouteContract>>;

/** Schemas the OpenAPI document names as components (`#/components/schemas/<name>`). */
export type NamedSchemas = Record<string, Schema>;
