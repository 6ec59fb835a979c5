import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';
import { checkReceiverUrl, postToReceiver } from '#shared/webhooks/receiver.ts';
import { newWebhookSecret, signedHeaders, webhookSignature } from '#shared/webhooks/signature.ts';

// Standard Webhooks signing checked against the specification's reference library, and the
// download guard on webhook URLs: at creation (loopback, private, metadata refused without
// loopback allowed) and at delivery (a host whose DNS now answers a private address is not
// connected to; a redirect is not followed).

test('the signature is the reference library’s, and its verifier accepts our headers', () => {
  const secret = newWebhookSecret();
  const body = JSON.stringify({ type: 'ping', timestamp: '2026-11-28T00:00:00.000Z', data: {} });
  const at = new Date('2026-11-28T00:00:00Z');
  const seconds = Math.floor(at.getTime() / 1000);
  expect(webhookSignature(secret, 'msg_1', seconds, body)).toBe(new Webhook(secret).sign('msg_1', at, body));
  const headers = signedHeaders(secret, 'msg_1', Math.floor(Date.now() / 1000), body);
  expect(new Webhook(secret).verify(body, headers)).toEqual(JSON.parse(body));
  expect(() => new Webhook(newWebhookSecret()).verify(body, headers)).toThrow();
});

test.each([
  'http://127.0.0.1:9/hook',
  'http://localhost:9/hook',
  'http://[::1]/hook',
  'http://10.1.2.3/hook',
  'http://172.16.0.1/hook',
  'http://192.168.0.1/hook',
  'http://169.254.169.254/latest/meta-data/',
  'http://[fd00:ec2::254]/',
  'http://0x7f000001/hook',
])('without loopback allowed, %s is refused at creation', async (url) => {
  await expect(checkReceiverUrl(url, { allowLoopback: false, timeoutMs: 1000 })).rejects.toMatchObject({
    name: 'InvalidInputError',
    details: { code: 'URL_REFUSED', errors: [{ path: 'body.url', message: expect.stringMatching(/not allowed/) }] },
  });
});

describe('at delivery', () => {
  let server: Server;
  let port: number;
  let hits: string[];
  beforeAll(async () => {
    hits = [];
    server = createServer((req, res) => {
      hits.push(req.url ?? '');
      if (req.url === '/moved') res.writeHead(307, { location: `http://127.0.0.1:${port}/target` }).end();
      else res.writeHead(204).end();
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    port = (server.address() as AddressInfo).port;
  });
  afterAll(() => new Promise<void>((r) => server.close(() => r())));

  test('a host whose DNS now answers a private address is not connected to', async () => {
    const outcome = await postToReceiver(
      `http://hooks.example.test:${port}/target`,
      '{}',
      {},
      {
        allowLoopback: false,
        timeoutMs: 1000,
        resolve: async () => [{ address: '127.0.0.1', family: 4 }],
      },
    );
    expect(outcome).toEqual({ ok: false, error: expect.stringContaining('loopback') });
    expect(hits).toEqual([]);
  });

  test('a redirect is a failed attempt, not followed', async () => {
    const policy = { allowLoopback: true, timeoutMs: 1000 };
    expect(await postToReceiver(`http://127.0.0.1:${port}/moved`, '{}', {}, policy)).toEqual({
      ok: false,
      statusCode: 307,
      error: 'Redirects are not followed',
    });
    expect(hits).toEqual(['/moved']);
    expect(await postToReceiver(`http://127.0.0.1:${port}/target`, '{}', {}, policy)).toEqual({
      ok: true,
      statusCode: 204,
    });
  });
});
