import * as z from '../zod.ts';
import { example } from '../openapi/examples.ts';
import { exportFormats } from './export.ts';

// Export and share: the request and response shapes of GET /chat/{chatId}/export,
// POST and DELETE /chat/{chatId}/share, and the public GET /shared/{shareId}.

export const SHARE_ID_EXAMPLE = 'Xq3vJ0b8TzW1mKc5yHn2Ra';

export const exportQuery = z.strictObject({
  format: z
    ._default(z.enum(exportFormats), 'markdown')
    .check(z.describe('markdown (the default) or json'), example('markdown')),
});

export const shareIdParams = z.strictObject({
  shareId: z
    .string()
    .check(
      z.describe('The id POST /chat/{chatId}/share answered (22 characters, base64url); any other is not found'),
      example(SHARE_ID_EXAMPLE),
    ),
});
