import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

// A webhook receiver on loopback, as a user's backend would run one: it records every POST
// (headers and the raw body, as a verifier needs them) and answers each path the statuses it is
// told to, in order (then 200).

export interface ReceivedHook {
  path: string;
  headers: Record<string, string>;
  body: string;
}

export interface WebhookReceiver {
  url: string;
  received: ReceivedHook[];
  /** The statuses of the next answers to `path`, in order (then 200). */
  answer(path: string, ...statuses: number[]): void;
  close(): Promise<void>;
}

export async function startWebhookReceiver(): Promise<WebhookReceiver> {
  const received: ReceivedHook[] = [];
  const statuses = new Map<string, number[]>();
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const headers = Object.fromEntries(
        Object.entries(req.headers).map(([k, v]) => [k, Array.isArray(v) ? v.join(', ') : (v ?? '')]),
      );
      const path = req.url ?? '/';
      received.push({ path, headers, body: Buffer.concat(chunks).toString('utf8') });
      res.writeHead(statuses.get(path)?.shift() ?? 200, { 'content-type': 'text/plain' });
      res.end('ok');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    received,
    answer: (path, ...next) => {
      statuses.set(path, next);
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
