import { readdir, readFile } from 'node:fs/promises';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { join, resolve } from 'node:path';
import { readLocalPayments } from './payment-stand-in/state.ts';
import { fileURLToPath } from 'node:url';
import { signLocalIdToken } from './local-idp.ts';

// Pages the local gateway serves beside the API (never deployed): the playground at `/` (its
// modules and stylesheets beside it, served as they are), the API
// reference at `/docs` (Swagger UI from the swagger-ui-dist package, no CDN), the OpenAPI document
// at `/api/v1/openapi.json`, the local identity provider's sign-in endpoint, which issues an
// ID token for an email so the playground can sign in from a browser, and where the payment
// provider's stand-in is (its URL and publishable key) so the playground can pay an order. The gateway asks this
// module first; anything it does not answer goes on to route matching.

interface DevPagesOptions {
  dataDir: string;
  apiPrefix: string;
}

export const LOCAL_SIGN_IN_PATH = '/local-idp/token';
const SIGN_IN_MAX_BYTES = 4096;

const types: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.json': 'application/json; charset=utf-8',
  '.png': 'image/png',
};
const typeOf = (file: string) => types[file.slice(file.lastIndexOf('.'))] ?? 'application/octet-stream';

const projectRoot = resolve(fileURLToPath(new URL('.', import.meta.url)), '../..');
const playgroundDir = join(projectRoot, 'infra', 'local', 'playground');
const swaggerDir = join(projectRoot, 'node_modules', 'swagger-ui-dist');

/** Path → file; only these are served (no path from the request ever reaches the file system). */
const files: Record<string, string> = {
  '/': join(playgroundDir, 'index.html'),
  '/docs': join(playgroundDir, 'docs.html'),
  '/docs/': join(playgroundDir, 'docs.html'),
  '/docs/swagger-ui.css': join(swaggerDir, 'swagger-ui.css'),
  '/docs/swagger-ui-bundle.js': join(swaggerDir, 'swagger-ui-bundle.js'),
  '/docs/favicon-32x32.png': join(swaggerDir, 'favicon-32x32.png'),
};

/** A playground module or stylesheet at the root (`/chat.js`): one plain name, no folder, no dots but its extension. */
const PLAYGROUND_ASSET = /^\/([a-z][a-z0-9-]*\.(?:js|css))$/;

/**
 * The playground's modules and stylesheets, served as they are (no build step): a name the
 * pattern allows and the folder's listing holds, so a request never names a path outside it.
 */
async function playgroundAsset(pathname: string): Promise<string | undefined> {
  const name = PLAYGROUND_ASSET.exec(pathname)?.[1];
  if (!name || !(await readdir(playgroundDir)).includes(name)) return undefined;
  return join(playgroundDir, name);
}

function send(res: ServerResponse, status: number, type: string, body: string | Buffer) {
  res.writeHead(status, { 'content-type': type, 'cache-control': 'no-cache', 'x-content-type-options': 'nosniff' });
  res.end(body);
}

async function readJson(req: IncomingMessage): Promise<unknown> {
  let text = '';
  for await (const chunk of req) {
    text += chunk;
    if (text.length > SIGN_IN_MAX_BYTES) throw new Error('too large');
  }
  return JSON.parse(text);
}

/** The local IdP's browser sign-in: `{ email, name? }` → `{ idToken }` (what `npm run token` prints). */
async function signIn(req: IncomingMessage, res: ServerResponse, dataDir: string) {
  if (req.method !== 'POST') return send(res, 405, types['.json']!, JSON.stringify({ message: 'Use POST' }));
  let body: { email?: unknown; name?: unknown };
  try {
    body = (await readJson(req)) as typeof body;
  } catch {
    return send(
      res,
      400,
      types['.json']!,
      JSON.stringify({ message: 'Send JSON: { "email": "you@example.com", "name": "You" }' }),
    );
  }
  const email = typeof body?.email === 'string' ? body.email.trim() : '';
  const name = typeof body?.name === 'string' ? body.name.trim().slice(0, 200) : '';
  if (!/^[^\s@]{1,64}@[^\s@]{1,190}\.[^\s@]{2,}$/.test(email)) {
    return send(res, 400, types['.json']!, JSON.stringify({ message: 'A valid email is required' }));
  }
  const idToken = await signLocalIdToken(dataDir, { email, ...(name && { name }) });
  send(res, 200, types['.json']!, JSON.stringify({ idToken }));
}

/** Where the playground learns how to pay at the payment provider's stand-in. */
export const LOCAL_PAYMENTS_CONFIG_PATH = '/local-payments/config';

/** The gateway's hook: true when the request was one of these pages and has been answered. */
export function devPages(
  options: DevPagesOptions,
): (req: IncomingMessage, res: ServerResponse, origin: string) => Promise<boolean> {
  return async (req, res, origin) => {
    const url = new URL(req.url ?? '/', 'http://localhost');
    if (url.pathname === LOCAL_SIGN_IN_PATH) {
      await signIn(req, res, options.dataDir);
      return true;
    }
    if (req.method !== 'GET' && req.method !== 'HEAD') return false;
    if (url.pathname === LOCAL_PAYMENTS_CONFIG_PATH) {
      // What a web client of the provider is given: where its API is and the publishable key
      // (never the secret key); the playground pays an intent with it and the order's client secret.
      const local = await readLocalPayments(options.dataDir).catch(() => undefined);
      if (!local?.apiUrl || !local.publishableKey) {
        send(res, 404, types['.json']!, JSON.stringify({ message: 'No payment provider stand-in runs' }));
      } else {
        send(res, 200, types['.json']!, JSON.stringify({ apiUrl: local.apiUrl, publishableKey: local.publishableKey }));
      }
      return true;
    }
    if (url.pathname === `${options.apiPrefix}/openapi.json`) {
      // The document's first server is this gateway, whatever port it runs on ("Try it out"):
      // the origin the page was loaded from, whose Host the gateway has checked (never any Host).
      const doc = JSON.parse(await readFile(join(projectRoot, 'docs', 'openapi.json'), 'utf8')) as {
        servers: { url: string }[];
      };
      doc.servers[0]!.url = `${origin}${options.apiPrefix}`;
      send(res, 200, types['.json']!, JSON.stringify(doc));
      return true;
    }
    const file = files[url.pathname] ?? (await playgroundAsset(url.pathname));
    if (!file) return false;
    send(res, 200, typeOf(file), await readFile(file));
    return true;
  };
}
