import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { DEFAULT_DATA_DIR } from './data-dir-lock.ts';
import { payOrder } from './payment-provider.ts';
import { readLocalPayments } from './payment-stand-in/state.ts';
import { asError } from '#shared/errors.ts';

// `npm run pay -- <orderId> [--fail]`: pays an order under `npm start` (same DATA_DIR) the way a
// customer's card would, at the provider's stand-in (keys and URL in DATA_DIR/local-payments.json):
// a card that pays, or with --fail one that is declined. The stand-in then posts the signed event
// to the service's webhook, which moves the order.

const usage = 'usage: npm run pay -- <orderId> [--fail]';
try {
  const { values, positionals } = parseArgs({ options: { fail: { type: 'boolean' } }, allowPositionals: true });
  const [orderId] = positionals;
  if (!orderId || positionals.length > 1) throw new Error(usage);
  const dataDir = resolve(process.env.DATA_DIR || DEFAULT_DATA_DIR);
  const local = await readLocalPayments(dataDir).catch(() => {
    throw new Error(
      `No payment provider stand-in in ${dataDir}: start the server (npm start) with this DATA_DIR first.`,
    );
  });
  if (!local.apiUrl)
    throw new Error(`${dataDir}/local-payments.json names no running stand-in: start the server first.`);
  const paid = await payOrder({ apiUrl: local.apiUrl, secretKey: local.secretKey }, orderId, {
    fail: values.fail === true,
  }).catch((err: unknown) => {
    const cause = (err as { cause?: { code?: string } }).cause;
    if (cause?.code === 'ECONNREFUSED')
      throw new Error(`The stand-in at ${local.apiUrl} is not running: start the server first.`);
    throw err;
  });
  console.log(
    paid.declined
      ? `Declined: payment ${paid.intentId} of order ${orderId} failed (card_declined); the order stays New.`
      : `Paid: payment ${paid.intentId} of order ${orderId} succeeded; the webhook moves the order to Processing.`,
  );
} catch (err) {
  console.error(asError(err).message);
  process.exit(2);
}
