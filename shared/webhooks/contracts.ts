import * as z from '../zod.ts';
import { doneSchema, byId, pageOf, type NamedSchemas, type RouteContracts } from '../openapi/contract.ts';
import { example, EXAMPLE_TIME } from '../openapi/examples.ts';
import { WEBHOOK_ID, webhookParams, createWebhookBody, listDeliveriesQuery, listWebhooksQuery } from './schemas.ts';

// The OpenAPI contracts of the webhooks routes (infra/openapi.ts alone imports this file, so no
// function bundle builds them): the schemas the document names, and what it says of each route.

const ENDPOINT_EXAMPLE = {
  id: WEBHOOK_ID,
  url: 'https://example.com/hooks/documents',
  events: ['file.completed'],
  createdAt: EXAMPLE_TIME,
};

const endpointSchema = z
  .object({
    id: z.string(),
    url: z.string(),
    events: z.array(z.string()),
    createdAt: z.iso.datetime(),
  })
  .check(example(ENDPOINT_EXAMPLE));

const createdEndpointSchema = z
  .object({
    ...endpointSchema.shape,
    secret: z.string().check(z.describe('whsec_…: the signing secret (Standard Webhooks); shown only here, keep it')),
  })
  .check(example({ ...ENDPOINT_EXAMPLE, secret: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw/ARfffhWQmw=' }));

const deliverySchema = z
  .object({
    id: z.string().check(z.describe('The webhook-id header: the same on every attempt')),
    event: z.string(),
    status: z.enum(['pending', 'retrying', 'delivered', 'failed']),
    attempts: z.number().check(z.int()),
    lastStatusCode: z.optional(z.number().check(z.int())),
    lastError: z.optional(z.string()),
    nextAttemptAt: z.optional(z.iso.datetime()),
    createdAt: z.iso.datetime(),
    updatedAt: z.iso.datetime(),
  })
  .check(
    example({
      id: 'msg_2Lq0fN3xV7tYbQm8sK1pRz5wHc',
      event: 'file.completed',
      status: 'delivered',
      attempts: 1,
      lastStatusCode: 200,
      createdAt: EXAMPLE_TIME,
      updatedAt: EXAMPLE_TIME,
    }),
  );

export const schemas: NamedSchemas = {
  CreateWebhookRequest: createWebhookBody,
  WebhookEndpoint: endpointSchema,
  CreatedWebhookEndpoint: createdEndpointSchema,
  WebhookDelivery: deliverySchema,
};

export const contracts: RouteContracts = {
  'create-webhook': {
    summary: 'Register a webhook endpoint',
    description:
      'Deliveries of the chosen events (file.completed, file.failed, export.ready, order.paid) are POSTed to the URL, ' +
      'signed per the Standard Webhooks specification (webhook-id, webhook-timestamp, webhook-signature: v1,<base64 ' +
      'HMAC-SHA256 of "id.timestamp.body">, keyed by the base64-decoded secret), body { type, timestamp, data }. A ' +
      'delivery not answered 2xx is retried after the delays of WEBHOOK_RETRY_DELAYS_S with the same webhook-id, then ' +
      'recorded failed. The URL passes the download guard now (400 URL_REFUSED) and at every attempt. The secret is ' +
      'shown only in this answer. 409 WEBHOOK_LIMIT past WEBHOOKS_MAX_PER_USER.',
    body: createWebhookBody,
    responses: { 201: createdEndpointSchema },
    errors: [400, 401, 409],
  },
  'list-webhooks': {
    summary: "The caller's webhook endpoints (without their secrets)",
    query: listWebhooksQuery,
    ...pageOf(endpointSchema),
    errors: [400, 401],
  },
  'delete-webhook': {
    summary: 'Delete a webhook endpoint and its delivery log',
    description: "Its deliveries still queued are dropped. Anyone else's endpoint is 404.",
    ...byId(webhookParams),
    responses: { 200: doneSchema({ id: WEBHOOK_ID }) },
  },
  'list-webhook-deliveries': {
    summary: "An endpoint's deliveries, newest first: event, status, attempts, last response code",
    description: 'Kept 30 days.',
    ...byId(webhookParams),
    query: listDeliveriesQuery,
    ...pageOf(deliverySchema),
  },
  'test-webhook': {
    summary: 'Send a ping to an endpoint',
    description:
      'A delivery of type ping ({ type: "ping", timestamp, data: { endpointId } }), queued and delivered as any event is; ' +
      'its outcome shows in the delivery log.',
    ...byId(webhookParams),
    responses: {
      202: z
        .object({ deliveryId: z.string(), event: z.literal('ping'), status: z.string() })
        .check(example({ deliveryId: 'msg_2Lq0fN3xV7tYbQm8sK1pRz5wHc', event: 'ping', status: 'pending' })),
    },
  },
};
