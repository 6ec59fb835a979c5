import * as z from '../zod.ts';
import { cuidSchema, pageQuerySchema, urlField } from '../schemas.ts';
import { SERVICE_EVENT_TYPES } from '../events/service-events.ts';
import { example } from '../openapi/examples.ts';

// /me/webhooks: a user's webhook endpoints, their delivery logs and a test ping.

export const WEBHOOK_ID = 'w4e8b2h6k1m5n9p3q7r0s4tv';
const URL_MAX_CHARS = 2_048;

export const webhookParams = z.strictObject({ webhookId: cuidSchema.check(example(WEBHOOK_ID)) });

export const createWebhookBody = z
  .strictObject({
    url: urlField(
      URL_MAX_CHARS,
      'Where deliveries are POSTed: http(s), no credentials, a public address (no private, link-local, loopback or metadata one); redirects are not followed',
    ),
    events: z
      .array(z.enum(SERVICE_EVENT_TYPES))
      .check(z.minLength(1), z.maxLength(SERVICE_EVENT_TYPES.length * 2), z.describe('The events delivered to it')),
  })
  .check(example({ url: 'https://example.com/hooks/documents', events: ['file.completed', 'file.failed'] }));

export const listDeliveriesQuery = pageQuerySchema;
export const listWebhooksQuery = pageQuerySchema;
