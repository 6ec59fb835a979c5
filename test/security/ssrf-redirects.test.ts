import http from 'node:http';
import net from 'node:net';
import type { AddressInfo } from 'node:net';
import { startTestApp, type TestApp } from '#test/helpers/app.ts';
import { fixturePdf } from '#test/helpers/make-pdf.ts';
import { installTripwire, type Tripwire } from '#test/helpers/loopback-tripwire.ts';
import { download, type FetchPolicy } from '#shared/net/guarded-fetch.ts';
import { PermanentFailure, RetryableFailure } from '#shared/files/failures.ts';
import { until } from '#test/helpers/until.ts';

// The PDF URL with loopback allowed (as under `npm start`), so a loopback server can misbehave:
// redirects to non-public addresses in every Location spelling (refused by the hop check, no
// connection: a tripwire on this process's sockets records any attempt), a server whose HEAD
// is honest and whose GET redirects (the size probe passes, the pipeline must still refuse), a
// redirect loop, a slow drip and Content-Lengths that lie both ways. Each ends with the file in
// a clean terminal state (failed with its reason) and nothing stuck in processing.

const CAP = 200_000;
let app: TestApp;
let tripwire: Tripwire;
let token: string;
let hello: Buffer;
let server: http.Server;
let base: string;
const hits: { method: string; path: string }[] = [];
/** path → what HEAD and GET answer. */
const behaviours = new Map<
  string,
  { head?: (res: http.ServerResponse) => void; get: (res: http.ServerResponse) => void }
>();

beforeAll(async () => {
  tripwire = installTripwire();
  hello = await fixturePdf('hello-world.pdf');
  server = http.createServer((req, res) => {
    const path = new URL(req.url ?? '/', 'http://x').pathname;
    hits.push({ method: req.method ?? '', path });
    const b = behaviours.get(path);
    if (!b) return void res.writeHead(404).end();
    if (req.method === 'HEAD')
      return (
        b.head ?? ((r) => r.writeHead(200, { 'content-type': 'application/pdf', 'content-length': hello.length }).end())
      )(res);
    b.get(res);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  app = await startTestApp({
    env: {
      PDF_ALLOW_LOOPBACK: 'true',
      PDF_MAX_BYTES: String(CAP),
      PDF_FETCH_TIMEOUT_MS: '1000',
      PDF_SYNC_WAIT_MS: '10000',
    },
  });
  ({ token } = await app.signIn('redirects@example.com'));
});
afterAll(async () => {
  tripwire?.uninstall();
  await app?.stop();
  server?.closeAllConnections();
  await new Promise<void>((r) => server?.close(() => r()));
});
afterEach(() => {
  expect(tripwire.attempts).toEqual([]); // nothing ever tried to leave loopback
});

const redirectTo = (location: string) => (res: http.ServerResponse) => res.writeHead(302, { location }).end();

async function ingest(path: string) {
  const upload = await app.request('POST', '/upload', {
    token,
    body: { fileName: 'r.pdf', contentType: 'application/pdf', size: 1000 },
  });
  const fileId = upload.body.data.fileId as string;
  const res = await app.request('POST', '/message/pdf', { token, body: { url: `${base}${path}`, fileId } });
  return { res, fileId };
}
const status = async (fileId: string) =>
  (await app.request('GET', `/message/pdf/${fileId}`, { token })).body.data.embeddingsData;

const settled = (fileId: string) =>
  until(
    `file ${fileId} to leave processing`,
    () => status(fileId),
    (s) => s.status !== 'processing',
  );

const NON_PUBLIC_LOCATIONS = [
  'http://169.254.169.254/latest/meta-data/iam/security-credentials/',
  '//169.254.169.254/latest/meta-data/', // protocol-relative
  '/\\169.254.169.254/latest/meta-data/', // a backslash the URL parser reads as a slash
  'HTTP://0xA9FEA9FE/',
  'http://2852039166/',
  'http://[::ffff:a9fe:a9fe]/',
  'http://[fd00:ec2::254]/latest/meta-data/',
  'http://10.0.0.1/x.pdf',
  'http://192.168.0.1:8080/x.pdf',
  'http://172.31.255.255/x.pdf',
  'http://[fe80::1]/x.pdf',
  'http://100.100.100.200/latest/meta-data/', // Alibaba's metadata, in CGNAT space
  'http://0.0.0.0:80/',
  'http://user:pw@10.0.0.1/x.pdf',
  'file:///etc/passwd',
  'gopher://10.0.0.1:6379/_INFO',
];

test.each(NON_PUBLIC_LOCATIONS)(
  'a redirect to %s is refused at the size check, without connecting',
  async (location) => {
    behaviours.set('/hop', { head: redirectTo(location), get: redirectTo(location) });
    const { res, fileId } = await ingest('/hop');
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({
      success: false,
      statusCode: 400,
      errors: [{ path: 'body.url', code: 'URL_REFUSED' }],
    });
    expect(res.body.message).toMatch(/not allowed|credentials|http/);
    expect((await status(fileId)).status).toBe('uploaded');
  },
);

test('an honest HEAD and a GET that redirects to the metadata service: the pipeline refuses the hop, once, and fails the file', async () => {
  behaviours.set('/two-faced.pdf', { get: redirectTo('http://169.254.169.254/latest/meta-data/') });
  const { res, fileId } = await ingest('/two-faced.pdf');
  // The size check passed; the download refuses the hop: the caller's URL is at fault (400).
  expect(res.status).toBe(400);
  expect(res.body).toMatchObject({ success: false, statusCode: 400, errors: [{ code: 'URL_REFUSED' }] });
  expect(await settled(fileId)).toMatchObject({
    status: 'failed',
    failure: { reason: 'URL_REFUSED', message: expect.stringMatching(/metadata/) },
  });
  // A refused address is permanent: not retried.
  expect(hits.filter((h) => h.path === '/two-faced.pdf' && h.method === 'GET')).toHaveLength(1);
});

test('a redirect loop ends at the redirect limit with a clean 400', async () => {
  behaviours.set('/loop-a', { head: redirectTo('/loop-b'), get: redirectTo('/loop-b') });
  behaviours.set('/loop-b', { head: redirectTo('/loop-a'), get: redirectTo('/loop-a') });
  const { res, fileId } = await ingest('/loop-a');
  expect(res.status).toBe(400);
  // The client gets the cause class (redirects); the detail (which hops) is logged.
  expect(res.body).toMatchObject({
    message: expect.stringMatching(
      /^The PDF could not be downloaded from the URL: its redirects could not be followed/,
    ),
    errors: [{ code: 'DOWNLOAD_FAILED' }],
  });
  expect((await status(fileId)).status).toBe('uploaded');
});

test('a slow drip times out on every attempt and the file fails cleanly (DOWNLOAD_FAILED), not stuck', async () => {
  behaviours.set('/drip.pdf', {
    get: (res) => {
      res.writeHead(200, { 'content-type': 'application/pdf', 'content-length': 100_000 });
      const timer = setInterval(() => (res.destroyed ? clearInterval(timer) : res.write('%')), 50);
      res.on('close', () => clearInterval(timer));
    },
  });
  const { fileId } = await ingest('/drip.pdf');
  expect(await settled(fileId)).toMatchObject({
    status: 'failed',
    failure: {
      reason: 'DOWNLOAD_FAILED',
      cause: 'TOO_SLOW',
      message: 'The PDF could not be downloaded from the URL: the server sent it too slowly',
    },
  });
  expect(hits.filter((h) => h.path === '/drip.pdf' && h.method === 'GET').length).toBeGreaterThanOrEqual(2); // retried, then given up
});

describe('Content-Length that lies (a raw socket server, so the lie reaches the wire)', () => {
  let raw: net.Server;
  let rawBase: string;
  let respond: (socket: net.Socket, head: boolean) => void = () => undefined;
  const sockets = new Set<net.Socket>();
  beforeAll(async () => {
    raw = net.createServer((socket) => {
      sockets.add(socket);
      socket.on('error', () => undefined);
      socket.once('data', (d) => respond(socket, d.toString().startsWith('HEAD')));
    });
    await new Promise<void>((r) => raw.listen(0, '127.0.0.1', r));
    rawBase = `http://127.0.0.1:${(raw.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    for (const s of sockets) s.destroy();
    await new Promise<void>((r) => raw.close(() => r()));
  });
  // A generous deadline: the cap, not the clock, must end these downloads, even on a loaded machine.
  const policy: FetchPolicy = { allowLoopback: true, maxBytes: CAP, timeoutMs: 60_000, maxRedirects: 3 };

  test('a Content-Length smaller than the body: the download stops at the announced length, the rest is never read', async () => {
    let written = 0;
    respond = (socket) => {
      socket.write(
        `HTTP/1.1 200 OK\r\ncontent-type: application/pdf\r\ncontent-length: ${hello.length}\r\nconnection: close\r\n\r\n`,
      );
      socket.write(hello);
      // Then far more than the cap, as if the length had been a lie.
      const junk = Buffer.alloc(64 * 1024, 0x41);
      const pump = () => {
        while (!socket.destroyed && written < 20 * CAP && socket.write(junk)) written += junk.length;
        if (!socket.destroyed && written < 20 * CAP) socket.once('drain', pump);
        else socket.end();
      };
      pump();
    };
    const bytes = await download(`${rawBase}/short.pdf`, policy);
    expect(bytes.equals(hello)).toBe(true);
  });

  test('a Content-Length larger than the body, then a hang-up: a retryable failure, never a truncated PDF accepted', async () => {
    respond = (socket) => {
      socket.end(`HTTP/1.1 200 OK\r\ncontent-type: application/pdf\r\ncontent-length: ${CAP - 1}\r\n\r\n%PDF-1.7\n`);
    };
    const err = await download(`${rawBase}/cut.pdf`, policy).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(RetryableFailure);
    expect((err as Error).message).toMatch(/ended early|interrupted|aborted/);
  });

  test('a chunked body beyond the cap after a HEAD announcing a small one: cut at the cap (TOO_LARGE), the server sees the hang-up', async () => {
    // The server's count of bytes sent when its socket closes: waited for, not timed.
    let closed!: (sent: number) => void;
    const closedAt = new Promise<number>((resolve) => (closed = resolve));
    respond = (socket, head) => {
      if (head)
        return void socket.end(`HTTP/1.1 200 OK\r\ncontent-type: application/pdf\r\ncontent-length: 1000\r\n\r\n`);
      socket.write('HTTP/1.1 200 OK\r\ncontent-type: application/pdf\r\ntransfer-encoding: chunked\r\n\r\n');
      let sent = 0;
      const piece = Buffer.alloc(16 * 1024, 0x25);
      const pump = () => {
        while (!socket.destroyed && sent < 200 * CAP) {
          sent += piece.length;
          if (!socket.write(`${piece.length.toString(16)}\r\n${piece.toString('latin1')}\r\n`))
            return void socket.once('drain', pump);
        }
      };
      socket.on('close', () => closed(sent));
      pump();
    };
    const err = await download(`${rawBase}/big.pdf`, policy).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(PermanentFailure);
    expect((err as PermanentFailure).reason).toBe('TOO_LARGE');
    const sent = await closedAt;
    expect(sent).toBeGreaterThan(0);
    expect(sent).toBeLessThan(100 * CAP); // the client hung up long before the end (socket buffers hold a few MB)
  });

  test('through the pipeline, the lying server ends in a clean terminal state', async () => {
    respond = (socket, head) => {
      if (head)
        return void socket.end(`HTTP/1.1 200 OK\r\ncontent-type: application/pdf\r\ncontent-length: 1000\r\n\r\n`);
      socket.end(`HTTP/1.1 200 OK\r\ncontent-type: application/pdf\r\ncontent-length: 5000\r\n\r\n%PDF-1.7\n`);
    };
    const upload = await app.request('POST', '/upload', {
      token,
      body: { fileName: 'l.pdf', contentType: 'application/pdf', size: 1000 },
    });
    const fileId = upload.body.data.fileId as string;
    await app.request('POST', '/message/pdf', { token, body: { url: `${rawBase}/lie.pdf`, fileId } });
    expect(await settled(fileId)).toMatchObject({ status: 'failed', failure: { reason: 'DOWNLOAD_FAILED' } });
  });
});
