import * as z from '../zod.ts';
import { example, EXAMPLE_IDS as ids, EXAMPLE_TIME as at } from '../openapi/examples.ts';

export const USER_EXAMPLE = {
  id: ids.user,
  email: 'you@example.com',
  role: 'user',
  name: 'You',
  address: null,
  picture: null,
  user_id: 'local|you@example.com',
  verified: true,
  createdAt: at,
  updatedAt: at,
};

export const userSchema = z
  .object({
    id: z.string(),
    email: z.email(),
    role: z.enum(['user', 'admin']),
    name: z.optional(z.string()),
    address: z.nullable(z.string()),
    picture: z.nullable(z.string()),
    user_id: z.string().check(z.describe("The identity provider's user id")),
    verified: z.boolean(),
    createdAt: z.iso.datetime(),
    updatedAt: z.iso.datetime(),
  })
  .check(example(USER_EXAMPLE));
