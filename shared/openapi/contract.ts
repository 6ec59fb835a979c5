import type { z as zm } from 'zod/mini';
import * as z from '../zod.ts';
import { example } from './examples.ts';

// The schemas are zod/mini's (see shared/zod.ts).
type Schema = zm.ZodMiniType;

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

// What many routes say alike, written once; spread into a contract (`...pageOf(item)`).

/** The response header of a paged list: the next page's cursor, when more may follow (sent back as ?cursor=). */
export const PAGING_HEADERS = ['x-next-cursor'];

/** A paged list's answer: an array of `item`, the next page's cursor in x-next-cursor. */
export const pageOf = (item: Schema) => ({ responses: { 200: z.array(item) }, headers: PAGING_HEADERS });

/**
 * A route on one resource named by its id in the path (`params`): 400 for a malformed id, 404 when
 * there is none the caller may see by that id (another user's answers the same); `more` adds the
 * route's other errors.
 */
export const byId = (params: Schema, ...more: number[]) => ({ params, errors: [400, 401, 404, ...more] });

/** What removing something answers: the ids it was named by (their examples here) and `<done>: true`. */
export function doneSchema(ids: Record<string, string>, done: 'deleted' | 'removed' | 'revoked' = 'deleted') {
  return z
    .object({ ...Object.fromEntries(Object.keys(ids).map((key) => [key, z.string()])), [done]: z.literal(true) })
    .check(example({ ...ids, [done]: true }));
}
