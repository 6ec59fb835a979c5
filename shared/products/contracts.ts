import { byId, pageOf, type NamedSchemas, type RouteContracts } from '../openapi/contract.ts';
import { productSchema, createProductBody, updateProductBody, productParams, productListQuery } from './schemas.ts';

// The OpenAPI contracts of the products routes (infra/openapi.ts alone imports this file, so no
// function bundle builds them): the schemas the document names, and what it says of each route.

/** The named component schemas of the OpenAPI document. */
export const schemas: NamedSchemas = {
  Product: productSchema,
  CreateProductRequest: createProductBody,
  UpdateProductRequest: updateProductBody,
};

export const contracts: RouteContracts = {
  'create-product': {
    summary: 'Create a product (admin)',
    body: createProductBody,
    responses: { 201: productSchema },
    errors: [400, 401, 403],
  },
  'update-product': {
    summary: 'Change some fields of a product (admin)',
    description:
      'Partial update: at least one of name, description, priceCents, currency. Orders already placed keep the price they were placed at.',
    ...byId(productParams, 403),
    body: updateProductBody,
    responses: { 200: productSchema },
  },
  'delete-product': {
    summary: 'Delete a product (admin)',
    description: 'Answers 204 without a body. Orders that name the product keep their copy of its name and price.',
    ...byId(productParams, 403),
    responses: { 204: null },
  },
  'list-products': {
    summary: 'List products by name',
    description:
      'A bare array ordered by name (case-insensitive). Pass the x-next-cursor header back as ?cursor= for the next page.',
    query: productListQuery,
    ...pageOf(productSchema),
    errors: [400, 401],
  },
  'get-product': {
    summary: 'Get one product',
    ...byId(productParams),
    responses: { 200: productSchema },
  },
};
