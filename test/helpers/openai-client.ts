import OpenAI from 'openai';

/** What the official OpenAI client raises for a refused request: its status and error body. */
export async function refusal(call: Promise<unknown>) {
  const err = await call.then(
    () => {
      throw new Error('the request was not refused');
    },
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(OpenAI.APIError);
  const { status, error } = err as InstanceType<typeof OpenAI.APIError>;
  return { status, error };
}
