import { byId, pageOf, type NamedSchemas, type RouteContracts } from '../openapi/contract.ts';
import {
  orderStatusSchema,
  orderItemSchema,
  paymentStatusSchema,
  paymentSchema,
  orderSchema,
  createOrderBody,
  updateOrderBody,
  orderParams,
  orderListQuery,
} from './schemas.ts';

// The OpenAPI contracts of the orders routes (infra/openapi.ts alone imports this file, so no
// function bundle builds them): the schemas the document names, and what it says of each route.

/** The named component schemas of the OpenAPI document. */
export const schemas: NamedSchemas = {
  Order: orderSchema,
  OrderItem: orderItemSchema,
  OrderStatus: orderStatusSchema,
  Payment: paymentSchema,
  PaymentStatus: paymentStatusSchema,
  CreateOrderRequest: createOrderBody,
  UpdateOrderRequest: updateOrderBody,
};

export const contracts: RouteContracts = {
  'create-order': {
    summary: 'Place an order for the caller',
    description:
      'Status New. items [{ productId, quantity }] (at least one) are priced from the products at order time; all items must share one currency. An unknown product is a 400 naming it. A total of 0 needs no payment: the order is paid (amountCents 0, no intent) and Processing at once.',
    body: createOrderBody,
    responses: { 201: orderSchema },
    errors: [400, 401],
  },
  'list-orders': {
    summary: 'List orders, newest first',
    description:
      'An admin gets every order, anyone else their own. A bare array; pass the x-next-cursor header back as ?cursor= for the next page.',
    query: orderListQuery,
    ...pageOf(orderSchema),
    errors: [400, 401],
  },
  'get-order': {
    summary: 'Get one order',
    description: 'The owner or an admin; anyone else gets 404.',
    ...byId(orderParams),
    responses: { 200: orderSchema },
  },
  'update-order': {
    summary: "Change an order's status (admin)",
    description:
      'Allowed moves: New → Processing → Shipped → Delivered, and New or Processing → Cancelled. Any other move, setting the current status again, or losing a race with a concurrent update is a 409 naming the current status.',
    ...byId(orderParams, 403, 409),
    body: updateOrderBody,
    responses: { 200: orderSchema },
  },
};
