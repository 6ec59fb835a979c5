import '../config/payments.ts';
import { GetSecretValueCommand } from '@aws-sdk/client-secrets-manager';
import * as z from '../zod.ts';
import { secretsClient } from '../clients.ts';
import type { Config } from '../config.ts';

// The payment provider's keys: from the environment (PAYMENTS_SECRET_KEY and
// PAYMENTS_WEBHOOK_SECRET, what npm start sets), or a Secrets Manager secret holding
// `{ "secretKey", "webhookSecret" }` (PAYMENTS_SECRET_ARN, what the stack sets on the functions
// that take payments), read once per cold start. Without either, the service takes no payments.

export interface PaymentKeys {
  secretKey: string;
  webhookSecret: string;
}

const secretSchema = z.object({
  secretKey: z.string().check(z.minLength(1)),
  webhookSecret: z.string().check(z.minLength(1)),
});

/** How to read the keys of a configuration (once, then cached); undefined when it takes no payments. */
export function paymentKeysOf(settings: Config): (() => Promise<PaymentKeys>) | undefined {
  let keys: Promise<PaymentKeys> | undefined;
  const { PAYMENTS_SECRET_KEY: secretKey, PAYMENTS_WEBHOOK_SECRET: webhookSecret, PAYMENTS_SECRET_ARN: arn } = settings;
  let read: () => Promise<PaymentKeys>;
  if (secretKey && webhookSecret) read = async () => ({ secretKey, webhookSecret });
  else if (arn) read = () => readKeySecret(arn);
  else return undefined;
  return () => {
    keys ??= read();
    keys.catch(() => (keys = undefined)); // a failed read is tried again by the next request
    return keys;
  };
}

async function readKeySecret(arn: string): Promise<PaymentKeys> {
  const out = await secretsClient().send(new GetSecretValueCommand({ SecretId: arn }));
  let json: unknown;
  try {
    json = JSON.parse(out.SecretString ?? '');
  } catch {
    // reported below
  }
  const parsed = secretSchema.safeParse(json);
  if (!parsed.success) throw new Error(`The secret ${arn} is not JSON { "secretKey", "webhookSecret" }`);
  return parsed.data;
}
