import net, { type AddressInfo, type Socket } from 'node:net';
import { startTestApp, type TestApp } from '#test/helpers/app.ts';
import { DOWNLOAD_FAILED_MESSAGE } from '#shared/pdf/failures.ts';

// Issue 13 item 8: a PDF URL must not turn the service into a port scanner. Whether the size
// check or the download meets a refused connection, a server that does not speak HTTP (a parse
// error) or a 404, the client sees one and the same answer; only the logs know which.
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
    `Download oracle: ${tally.requests} failing URLs (refused, not HTTP, 404; at the size check and at the download), one client-visible answer`,
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

const detail = /ECONNREFUSED|connect|parse|HPE_|404|answered|Not Found|SSH|attempts|redirect|127\.0\.0\.1|\d{4,5}/i;

test('the size check: a refused connection, a parse error and a 404 answer byte-identical bodies', async () => {
  const answers = await Promise.all([
    ingest(`http://127.0.0.1:${closedPort}/doc.pdf`), // refused at once
    ingest(`${rawBase}/garbage/head`),
    ingest(`${rawBase}/404/head`),
  ]);
  const bodies = answers.map(({ res }) => res.text);
  for (const { res, status } of answers) {
    expect(res.status).toBe(400);
    expect(res.body).toEqual({
      success: false,
      statusCode: 400,
      message: DOWNLOAD_FAILED_MESSAGE,
      errors: [{ path: 'body.url', message: DOWNLOAD_FAILED_MESSAGE, code: 'DOWNLOAD_FAILED' }],
    });
    expect(res.text).not.toMatch(detail);
    expect(status.status).toBe('uploaded'); // nothing started
  }
  expect(new Set(bodies).size).toBe(1);
});

test('the download: a refused connection (after a redirect), a parse error and a 404 fail the file with one message', async () => {
  const answers = await Promise.all([
    ingest(`${rawBase}/refused/get`),
    ingest(`${rawBase}/garbage/get`),
    ingest(`${rawBase}/404/get`),
  ]);
  for (const { res, status } of answers) {
    expect(res.status).toBe(500);
    expect(res.body).toEqual({
      success: false,
      statusCode: 500,
      message: DOWNLOAD_FAILED_MESSAGE,
      errors: [{ path: 'fileId', message: DOWNLOAD_FAILED_MESSAGE, code: 'DOWNLOAD_FAILED' }],
    });
    expect(status).toMatchObject({
      status: 'failed',
      failure: { reason: 'DOWNLOAD_FAILED', message: DOWNLOAD_FAILED_MESSAGE },
    });
    expect(JSON.stringify(status.failure)).not.toMatch(detail);
  }
  expect(new Set(answers.map(({ res }) => res.text)).size).toBe(1);
  expect(new Set(answers.map(({ status }) => JSON.stringify(status.failure))).size).toBe(1);
});
