import { parsePdfUrl, resolveAllowed, type FetchPolicy } from '#shared/net/guarded-fetch.ts';
import { PermanentFailure } from '#shared/files/failures.ts';

// The URL half of the SSRF guard: odd spellings are normalised by the WHATWG URL parser, then
// every resolved address is classified. DNS is replaced by a table; nothing touches the network.

const dns: Record<string, string[]> = {
  'public.example': ['93.184.216.34'],
  localhost: ['127.0.0.1', '::1'],
  'mixed.example': ['93.184.216.34', '10.0.0.5'],
  'metadata.example': ['169.254.169.254'],
  'v6-private.example': ['fd00::5'],
};
const policy = (allowLoopback = false): FetchPolicy => ({
  allowLoopback,
  maxBytes: 1024,
  timeoutMs: 1000,
  maxRedirects: 3,
  resolve: async (host) => {
    const found = dns[host];
    if (!found) throw new Error('ENOTFOUND');
    return found.map((address) => ({ address, family: address.includes(':') ? 6 : 4 }));
  },
});

const refused = async (url: string, allowLoopback = false) => {
  const err = await resolveAllowed(parsePdfUrl(url), policy(allowLoopback)).then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(PermanentFailure);
  return err as PermanentFailure;
};

test.each([
  'http://127.0.0.1/a.pdf',
  'http://localhost/a.pdf',
  'http://LOCALHOST./a.pdf',
  'http://[::1]/a.pdf',
  'http://2130706433/a.pdf',
  'http://0x7f.1/a.pdf',
  'http://0177.0.0.1/a.pdf',
  'http://127.1/a.pdf',
  'http://[::ffff:127.0.0.1]/a.pdf',
  'http://0.0.0.0/a.pdf',
  'http://0/a.pdf',
])('the loopback spelling %s is refused when loopback is not allowed', async (url) => {
  const err = await refused(url);
  expect(err.message).toMatch(/loopback|unspecified|resolved/);
});

test.each([
  'http://10.0.0.1/a.pdf',
  'http://169.254.169.254/latest/meta-data/',
  'http://[fd00:ec2::254]/',
  'http://[fe80::1]/',
  'http://[fc00::1]/',
  'http://100.64.0.1/',
  'http://metadata.example/',
  'http://v6-private.example/',
  'http://mixed.example/a.pdf',
  'http://0xa9fea9fe/',
])('%s is refused even when loopback is allowed', async (url) => {
  await refused(url, true);
});

test('loopback is allowed only with the setting, in every spelling', async () => {
  for (const url of ['http://127.0.0.1:8080/a.pdf', 'http://localhost/a.pdf', 'http://2130706433/', 'http://[::1]/']) {
    await expect(resolveAllowed(parsePdfUrl(url), policy(true))).resolves.toMatchObject({
      address: expect.any(String),
    });
  }
});

test('a public host resolves to the address the connection is pinned to', async () => {
  await expect(resolveAllowed(parsePdfUrl('https://public.example/doc.pdf'), policy())).resolves.toEqual({
    address: '93.184.216.34',
    family: 4,
  });
});

test.each([
  ['ftp://public.example/a.pdf', /http/],
  ['file:///etc/passwd', /http/],
  ['http://user:secret@public.example/a.pdf', /credentials/],
  ['http://user@public.example/a.pdf', /credentials/],
  ['not a url', /not valid/],
  ['javascript:alert(1)', /http/],
])('%s is refused before any lookup', (url, message) => {
  expect(() => parsePdfUrl(url)).toThrow(message);
});

test('an unknown host is refused', async () => {
  const err = await refused('http://nowhere.example/a.pdf');
  expect(err.message).toMatch(/could not be resolved/);
});
