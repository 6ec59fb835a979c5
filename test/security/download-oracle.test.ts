import net, { type AddressInfo, type Socket } from 'node:net';
import { startTestApp, type TestApp } from '#test/helpers/app.ts';
import { DOWNLOAD_FAILED_MESSAGE } from '#shared/files/failures.ts';

// A PDF URL must not turn the service into a port scanner. Whether the size check or the download
// meets a refused connection or a server that does not speak HTTP (a parse error), the client sees
// one and the same answer (NO_HTTP_ANSWER); only the logs know which. Once a server has answered
// over HTTP, its status is said (a 404), never the host, port or connection detail.
// The servers are raw loopback sockets, so each failure is the real one.

let app: TestApp;
let token: string;
let raw: net.Server;
let rawBase: string;
let closedPort: number;
const tally = { requests: 0 };

/** What the raw server does for a request line (method, path). */
function answer(socket: Socket, method: string, path: string) {
  const [, kind, stage] = path.split('/'); // /<kind>/<stage where it fails>
  const failsHere = stage === 'head' ? method === 'HEAD' : method === 'GET';
  if (!failsHere) {
    return void socket.end(
      'HTTP/1.1 200 OK\r\ncontent-type: application/pdf\r\ncontent-length: 900\r\nconnection: close\r\n\r\n',
    );
  }
  if (kind === 'refused') {
    // A redirect to a port nobody listens on: the connection is refused.
    return void socket.end(
      `HTTP/1.1 302 Found\r\nlocation: http://127.0.0.1:${closedPort}/x.pdf\r\ncontent-length: 0\r\nconnection: close\r\n\r\n`,
    );
  }
  if (kind === 'garbage') return void socket.end('SSH-2.0-OpenSSH_9.6\r\nProtocol mismatch.\r\n'); // not HTTP: a parse error
  socket.end(
    'HTTP/1.1 404 Not Found\r\ncontent-type: text/plain\r\ncontent-length: 9\r\nconnection: close\r\n\r\nnot found',
  );
}

beforeAll(async () => {
  raw = net.createServer((socket) => {
    let head = '';
    socket.on('data', (d: Buffer) => {
      head += d.toString('latin1');
      if (!head.includes('\r\n\r\n')) return;
      const [method = '', path = ''] = head.split(' ');
      answer(socket, method, path);
    });
    socket.on('error', () => undefined);
  });
  await new Promise<void>((r) => raw.listen(0, '127.0.0.1', r));
  rawBase = `http://127.0.0.1:${(raw.address() as AddressInfo).port}`;
  const probe = net.createServer();
  await new Promise<void>((r) => probe.listen(0, '127.0.0.1', r));
  closedPort = (probe.address() as AddressInfo).port;
  await new Promise<void>((r) => probe.close(() => r()));

  app = await startTestApp({ env: { PDF_SYNC_WAIT_MS: '30000' } });
  ({ token } = await app.signIn('scanner@example.com'));
});
afterAll(async () => {
  await app?.stop();
  await new Promise<void>((r) => raw?.close(() => r()));
  console.log(
    `Download oracle: ${tally.requests} failing URLs (refused, not HTTP, 404; at the size check and at the download): one answer before HTTP, the status after`,
  );
});

async function ingest(url: string) {
  const fileId = (
    await app.request('POST', '/upload', {
      token,
      body: { fileName: 'x.pdf', contentType: 'application/pdf', size: 900 },
    })
  ).body.data.fileId;
  const res = await app.request('POST', '/message/pdf', { token, body: { url, fileId } });
  tally.requests++;
  const status = (await app.request('GET', `/message/pdf/${fileId}`, { token })).body.data.embeddingsData;
  return { res, status };
}

const detail = /ECONNREFUSED|connect|parse|HPE_|SSH|attempts|127\.0\.0\.1|\d{4,5}/i;
/** What a client is told when nothing answered over HTTP, however the connection failed. */
const NO_HTTP_ANSWER = expect.stringMatching(new RegExp(`^${DOWNLOAD_FAILED_MESSAGE}: no HTTP answer came back`));
/** The 400 of a download that got no HTTP answer, the error on `path`. */
function expectNoHttpAnswer(res: { status: number; body: unknown }, path: string) {
  expect(res.status).toBe(400);
  expect(res.body).toEqual({
    success: false,
    statusCode: 400,
    message: NO_HTTP_ANSWER,
    errors: [{ path, message: NO_HTTP_ANSWER, code: 'DOWNLOAD_FAILED' }],
  });
}
const NOT_FOUND = `${DOWNLOAD_FAILED_MESSAGE}: the server answered 404 Not Found`;

test('the size check: a refused connection and a server that is not HTTP answer byte-identical bodies; a 404 says 404', async () => {
  const [refused, garbage, notFound] = await Promise.all([
    ingest(`http://127.0.0.1:${closedPort}/doc.pdf`), // refused at once
    ingest(`${rawBase}/garbage/head`),
    ingest(`${rawBase}/404/head`),
  ]);
  for (const { res, status } of [refused!, garbage!]) {
    expectNoHttpAnswer(res, 'body.url');
    expect(res.text).not.toMatch(detail);
    expect(status.status).toBe('uploaded'); // nothing started
  }
  expect(refused!.res.text).toBe(garbage!.res.text);
  // A server that answered over HTTP: what it answered is no secret (the host and port stay unsaid).
  expect(notFound!.res.status).toBe(400);
  expect(notFound!.res.body.message).toBe(NOT_FOUND);
  expect(notFound!.res.text).not.toMatch(detail);
});

test('the download: a refused connection (after a redirect) and a server that is not HTTP fail the file with one message; a 404 says 404', async () => {
  const [refused, garbage, notFound] = await Promise.all([
    ingest(`${rawBase}/refused/get`),
    ingest(`${rawBase}/garbage/get`),
    ingest(`${rawBase}/404/get`),
  ]);
  // The URL's host, not this service, failed: a 400 as at the size check (no 500 for the 5xx alarm).
  for (const { res, status } of [refused!, garbage!]) {
    expectNoHttpAnswer(res, 'fileId');
    expect(status).toMatchObject({
      status: 'failed',
      failure: { reason: 'DOWNLOAD_FAILED', cause: 'NO_HTTP_ANSWER', message: NO_HTTP_ANSWER },
    });
    expect(JSON.stringify(status.failure)).not.toMatch(detail);
  }
  expect(refused!.res.text).toBe(garbage!.res.text);
  expect(JSON.stringify(refused!.status.failure)).toBe(JSON.stringify(garbage!.status.failure));
  // The 404: the caller's URL is wrong (a 400), and the failure says so.
  expect(notFound!.res.status).toBe(400);
  expect(notFound!.status.failure).toEqual({
    reason: 'DOWNLOAD_FAILED',
    cause: 'HTTP_STATUS',
    httpStatus: 404,
    message: NOT_FOUND,
  });
});
