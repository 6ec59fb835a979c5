import fc from 'fast-check';
import http from 'node:http';
import { startTestApp, type TestApp } from '#test/helpers/app.ts';
import { fixturePdf } from '#test/helpers/make-pdf.ts';
import { installTripwire, type Tripwire } from '#test/helpers/loopback-tripwire.ts';
import { classifyAddress } from '#shared/net/address-class.ts';
import { embeddedV4Spelling, inBlock, ipv4Spelling, ipv6Spelling, v6In, type Bytes } from './ip-spellings.ts';

// SSRF on the PDF URL with PDF_ALLOW_LOOPBACK=false (the deployed setting), generated:
// loopback, private, link-local, metadata and other non-public addresses in every spelling the
// URL parser accepts. Each is refused with a 400 before anything is fetched: the loopback test
// server sees no request, and a tripwire on this process's sockets proves that no connection
// to any other address was even attempted (so a broken guard fails here instead of reaching
// the network). test/integration/pdf-ssrf.test.ts has the fixed list of classic spellings.

const RUNS = Number(process.env.SSRF_RUNS ?? 150);

let app: TestApp;
let tripwire: Tripwire;
let token: string;
let fileId: string;
const tally: Record<string, number> = {};

beforeAll(async () => {
  tripwire = installTripwire();
  app = await startTestApp({
    pdfs: { '/doc.pdf': { body: await fixturePdf('hello-world.pdf') } },
    env: { PDF_ALLOW_LOOPBACK: 'false', PDF_SYNC_WAIT_MS: '0' },
  });
  ({ token } = await app.signIn('ssrf@example.com'));
  fileId = (
    await app.request('POST', '/upload', {
      token,
      body: { fileName: 'x.pdf', contentType: 'application/pdf', size: 743 },
    })
  ).body.data.fileId;
});
afterAll(async () => {
  tripwire?.uninstall();
  await app?.stop();
  console.log(
    `SSRF (PDF_ALLOW_LOOPBACK=false): ${Object.entries(tally)
      .map(([k, n]) => `${n} ${k}`)
      .join(', ')}; every one refused with 400 before any connection`,
  );
});

/** POSTs the URL and checks the refusal: 400 naming the URL, nothing fetched, nothing connected, nothing started. */
async function refused(url: string, kind: string, expectClass: RegExp) {
  // The generator means what it says: the URL parser turns the spelling into such an address.
  const host = new URL(url).hostname.replace(/^\[|\]$/g, '');
  const cls = classifyAddress(host);
  if (!(host === 'localhost' || expectClass.test(cls)))
    throw new Error(`generator bug: ${url} parses to ${host} (${cls})`);
  const res = await app.request('POST', '/message/pdf', { token, body: { url, fileId } });
  tally[kind] = (tally[kind] ?? 0) + 1;
  const problems = [
    res.status !== 400 && `status ${res.status}`,
    res.body?.errors?.[0]?.path !== 'body.url' && 'errors[0].path is not body.url',
    !/not allowed/.test(res.body?.message ?? '') && `message: ${res.body?.message}`,
    app.pdfs.count() > 0 && `the test server got ${app.pdfs.count()} request(s)`,
    tripwire.attempts.length > 0 && `connections attempted: ${tripwire.attempts.join(', ')}`,
  ].filter(Boolean);
  if (problems.length) throw new Error(`${url} (${host}, ${cls}): ${problems.join('; ')}`);
}

test('the tripwire refuses a connection before it is made', async () => {
  tripwire.deny.add('127.0.0.3');
  const err = await new Promise<Error>((resolve) => {
    try {
      http.get(`http://127.0.0.3:${app.pdfs.port}/doc.pdf`).on('error', resolve);
    } catch (e) {
      resolve(e as Error);
    }
  });
  tripwire.deny.clear();
  expect(err.message).toMatch(/tripwire/);
  expect(tripwire.attempts).toEqual([`127.0.0.3:${app.pdfs.port}`]);
  expect(app.pdfs.count()).toBe(0);
  tripwire.attempts.length = 0;
});

test('loopback in every spelling (IPv4 notations, full-width digits, IPv6, embedded IPv4) is refused', async () => {
  const loopback = inBlock([127], 8).chain((b) => fc.oneof(ipv4Spelling(b), embeddedV4Spelling(b)));
  const v6 = fc.constant<number[]>([0, 0, 0, 0, 0, 0, 0, 1]).chain(ipv6Spelling);
  const names = fc.constantFrom(
    'localhost',
    'LOCALHOST',
    'LocalHost',
    '%6c%6f%63%61%6c%68%6f%73%74',
    'ｌｏｃａｌｈｏｓｔ',
  );
  await fc.assert(
    fc.asyncProperty(fc.oneof(loopback, v6, names), fc.constantFrom('/doc.pdf', '/x?y=1#z', ''), async (host, path) => {
      await refused(`http://${host}:${app.pdfs.port}${path}`, 'loopback spellings', /^loopback$/);
    }),
    { numRuns: RUNS },
  );
});

test('private, link-local, metadata, CGNAT, multicast, reserved and unspecified addresses in every spelling are refused without a connection', async () => {
  const blocks: [number[], number][] = [
    [[10], 8],
    [[172, 16], 12],
    [[192, 168], 16],
    [[169, 254], 16],
    [[169, 254, 169, 254], 32],
    [[100, 64], 10],
    [[0], 8],
    [[224], 4],
    [[240], 4],
    [[198, 18], 15],
    [[192, 0, 2], 24],
    [[168, 63, 129, 16], 32],
  ];
  const v4 = fc
    .constantFrom(...blocks)
    .chain(([p, bits]) => inBlock(p, bits))
    .chain((b: Bytes) => fc.oneof(ipv4Spelling(b), embeddedV4Spelling(b)));
  const v6 = fc
    .constantFrom<[number[], number]>(
      [[0xfc00], 7],
      [[0xfe80], 10],
      [[0xff00], 8],
      [[0xfd00, 0x0ec2, 0, 0, 0, 0, 0, 0x254], 128],
      [[0], 128],
      [[0x2001, 0x0db8], 32],
    )
    .chain(([p, bits]) => v6In(p, bits))
    .chain(ipv6Spelling);
  await fc.assert(
    fc.asyncProperty(fc.oneof(v4, v6), fc.constantFrom(80, 443, 8080), async (host, port) => {
      await refused(
        `http://${host}:${port}/latest/meta-data/`,
        'non-public spellings',
        /^(private|link-local|metadata|cgnat|unspecified|multicast|reserved|unique-local)$/,
      );
    }),
    { numRuns: RUNS },
  );
});

test('the classic spellings the generators do not reach', async () => {
  const port = app.pdfs.port;
  for (const host of [
    '127.000.000.001',
    '0x7F.1',
    '127.0x0.1',
    '127。0。0。1',
    '①②⑦.0.0.1',
    '%31%32%37.0.0.1',
    '[::ffff:7f00:1]',
    '[0:0:0:0:0:0:0:1]',
    '[::]',
    '0',
    '127.255.255.254',
    '[::127.0.0.1]',
    // IPv4-translated, NAT64 local use and Teredo forms.
    '[::ffff:0:127.0.0.1]',
    '[::ffff:0:7f00:1]',
    '[64:ff9b:1:7f00:1::]',
    '[2001:0:4136:e378:8000:63bf:80ff:fffe]',
  ]) {
    await refused(`http://${host}:${port}/doc.pdf`, 'fixed spellings', /^(loopback|unspecified)$/);
  }
  for (const url of [
    'http://0xa9fea9fe/',
    'http://2852039166/',
    'http://[::ffff:a9fe:a9fe]/',
    'http://[fd00:ec2::254]/',
    'http://[64:ff9b::a9fe:a9fe]/',
    'http://[::ffff:0:a9fe:a9fe]/',
    'http://[::ffff:0:169.254.169.254]/',
    'http://[2002:a9fe:a9fe::]/',
    'http://[2001::5601:5601]/',
  ]) {
    await refused(url, 'fixed spellings', /^metadata$/);
  }
});

test('nothing was started: the file is still only uploaded', async () => {
  const res = await app.request('GET', `/message/pdf/${fileId}`, { token });
  expect(res.body.data.embeddingsData.status).toBe('uploaded');
  expect(tripwire.attempts).toEqual([]);
});
