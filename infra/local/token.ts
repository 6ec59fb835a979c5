import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { z } from 'zod';
import { DEFAULT_DATA_DIR } from './data-dir-lock.ts';
import { hasLocalIdpKey, signLocalIdToken } from './local-idp.ts';
import { asError } from '#shared/errors.ts';

// `npm run -s token -- --email E [--name N]`: prints an ID token of the local identity
// provider, alone on stdout, for POST /auth under `npm start` (same DATA_DIR).

const usage = 'usage: npm run -s token -- --email you@example.com [--name "Your Name"] [--ttl seconds]';
try {
  const { values } = parseArgs({
    options: {
      email: { type: 'string' },
      name: { type: 'string' },
      ttl: { type: 'string' },
      unverified: { type: 'boolean' },
    },
  });
  const email = z.email().safeParse(values.email);
  if (!email.success) throw new Error(`--email must be an email address\n${usage}`);
  const ttl = z.coerce
    .number()
    .int()
    .min(60)
    .max(30 * 24 * 3600)
    .default(3600)
    .parse(values.ttl);
  const dataDir = resolve(process.env.DATA_DIR || DEFAULT_DATA_DIR);
  // A key made here would be one the server does not know (its POST /auth would answer 401).
  if (!hasLocalIdpKey(dataDir)) {
    throw new Error(
      `No local identity provider in ${dataDir}: run this with the DATA_DIR of the running \`npm start\` ` +
        '(its banner shows the command), or start the server first.',
    );
  }
  const token = await signLocalIdToken(dataDir, {
    email: email.data,
    ...(values.name && { name: values.name }),
    verified: !values.unverified,
    ttlSeconds: ttl,
  });
  process.stdout.write(`${token}\n`);
} catch (err) {
  console.error(asError(err).message);
  process.exit(2);
}
