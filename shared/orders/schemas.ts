import * as z from '../zod.ts';
import { cuidSchema, idParam, pageQuerySchema } from '../schemas.ts';
import { ORDER_STATUSES } from './order-status.ts';
import { PAYMENT_STATUSES } from './payment-status.ts';
import { example, EXAMPLE_IDS as ids, EXAMPLE_TIME as at } from '../openapi/examples.ts';

// Orders: request schemas, the payload schema and the contracts of the order routes. Order
// routes answer bare objects and `{ message, errors? }` errors (the commerce routes' shape in docs/openapi.json).

const MAX_ORDER_ITEMS = 100;
const MAX_ITEM_QUANTITY = 1000;

export const orderStatusSchema = z.enum(ORDER_STATUSES, {
  error: `Must be one of ${ORDER_STATUSES.join(', ')}`,
});

const ORDER_ITEM_EXAMPLE = {
  productId: ids.product,
  name: 'Reading lamp',
  quantity: 2,
  unitPriceCents: 2499,
  currency: 'EUR',
};

export const orderItemSchema = z
  .object({
    productId: cuidSchema,
    name: z.string().check(z.describe("The product's name when the order was placed")),
    quantity: z.number().check(z.int()),
    unitPriceCents: z.number().check(z.int(), z.describe("The product's price when the order was placed")),
    currency: z.string(),
    grantsTokens: z.optional(
      z
        .number()
        .check(
          z.int(),
          z.describe(
            "Tokens per unit added to the buyer's credits once the order is paid (the product's when ordered)",
          ),
        ),
    ),
  })
  .check(example(ORDER_ITEM_EXAMPLE));
export type OrderItem = z.infer<typeof orderItemSchema>;

export const paymentStatusSchema = z.enum(PAYMENT_STATUSES, { error: `Must be one of ${PAYMENT_STATUSES.join(', ')}` });

const PAYMENT_EXAMPLE = {
  status: 'requires_payment',
  amountCents: 4998,
  currency: 'EUR',
  clientSecret: 'pi_3MtwBwLkdIwHu7ix28a3tqPa_secret_YrKJUKribcBjcG8HVhfZluoGH',
};

export const paymentSchema = z
  .object({
    status: paymentStatusSchema,
    amountCents: z.number().check(z.int()),
    currency: z.string(),
    clientSecret: z.optional(
      z
        .string()
        .check(
          z.describe(
            "What the client hands the provider's payment form to pay (the order's owner only, never stored elsewhere)",
          ),
        ),
    ),
  })
  .check(example(PAYMENT_EXAMPLE));
export type Payment = z.infer<typeof paymentSchema>;

export const orderSchema = z
  .object({
    id: cuidSchema,
    userId: cuidSchema,
    status: orderStatusSchema,
    createdAt: z.iso.datetime(),
    updatedAt: z.iso.datetime(),
    providerPaymentIntentId: z
      .nullable(z.string())
      .check(
        z.describe(
          "The payment provider's payment intent id, made by the server with the order; null when nothing is due (a total of 0)",
        ),
      ),
    payment: z
      .nullable(paymentSchema)
      .check(
        z.describe(
          'The payment of the order; null when the service takes no payments (none configured). A free order (total 0) is paid as it is placed: status paid, amountCents 0, no client secret',
        ),
      ),
    items: z.array(orderItemSchema),
    totalCents: z.number().check(z.int(), z.describe('Sum of quantity × unitPriceCents; 0 for an order without items')),
    currency: z.nullable(z.string()).check(z.describe("The items' currency; null for an order without items")),
  })
  .check(
    example({
      id: ids.order,
      userId: ids.user,
      status: 'Processing',
      createdAt: at,
      updatedAt: at,
      providerPaymentIntentId: 'pi_3MtwBwLkdIwHu7ix28a3tqPa',
      payment: { ...PAYMENT_EXAMPLE, status: 'paid' },
      items: [ORDER_ITEM_EXAMPLE],
      totalCents: 4998,
      currency: 'EUR',
    }),
  );
export type Order = z.infer<typeof orderSchema>;

const requestedItem = z.strictObject({
  productId: cuidSchema,
  quantity: z
    .number()
    .check(
      z.int('Must be a whole number'),
      z.gte(1, 'Must be at least 1'),
      z.lte(MAX_ITEM_QUANTITY, `Must be at most ${MAX_ITEM_QUANTITY}`),
    ),
});

export const createOrderBody = z
  .strictObject({
    // An order of nothing (a total of 0) is a client's mistake, not an order.
    items: z.array(requestedItem, { error: 'An order needs at least one item: items [{ productId, quantity }]' }).check(
      z.minLength(1, 'An order needs at least one item: items [{ productId, quantity }]'),
      z.maxLength(MAX_ORDER_ITEMS, `At most ${MAX_ORDER_ITEMS} items`),
      z.superRefine((items, ctx) => {
        // One line per product keeps totals and quantities unambiguous.
        const seen = new Set<string>();
        items.forEach((item, i) => {
          if (seen.has(item.productId)) {
            ctx.addIssue({
              code: 'custom',
              path: [i, 'productId'],
              message: 'This product is already in the order; raise its quantity instead',
            });
          }
          seen.add(item.productId);
        });
      }),
    ),
  })
  .check(example({ items: [{ productId: ids.product, quantity: 2 }] }));
export type CreateOrderInput = z.infer<typeof createOrderBody>;

export const updateOrderBody = z.strictObject({ status: orderStatusSchema }).check(example({ status: 'Shipped' }));

export const orderParams = z.strictObject({ id: idParam('order') });
export const orderListQuery = z.extend(pageQuerySchema, {
  paymentStatus: z
    .optional(paymentStatusSchema)
    .check(z.describe('Only orders whose payment has this status'), example('paid')),
});
