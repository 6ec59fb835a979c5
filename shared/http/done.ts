// What removing something answers, once it is done: the ids it was named by and `<what>: true`
// (its contract's schema: doneSchema, shared/openapi/contract.ts).

export async function done(
  removal: Promise<unknown>,
  ids: Record<string, string>,
  what: 'deleted' | 'removed' | 'revoked' = 'deleted',
): Promise<Record<string, string | true>> {
  await removal;
  return { ...ids, [what]: true };
}
