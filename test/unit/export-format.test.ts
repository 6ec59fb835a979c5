import type { APIGatewayProxyEvent } from 'aws-lambda';
import { contentDisposition } from '#shared/http/attachment.ts';
import { requestBaseUrl } from '#shared/http/base-url.ts';
import { markdownInline, markdownQuote, markdownText } from '#shared/sharing/markdown.ts';
import { citationsOf, safeFileName } from '#shared/sharing/transcript.ts';

// The pure pieces of export and share: Markdown that shows text literally, the download's file
// name and header, the cited passages, and the base of share links.

describe('markdownText', () => {
  test('what would open a heading, a fence, HTML, a list, a link or an emphasis is escaped', () => {
    expect(markdownText('# Title\n```js\n<b>x</b> [a](b) *e* _u_ ~s~ a|b &amp; ![i](j) \\n')).toBe(
      '\\# Title  \n\\`\\`\\`js  \n\\<b\\>x\\</b\\> \\[a\\](b) \\*e\\* \\_u\\_ \\~s\\~ a\\|b \\&amp; \\!\\[i\\](j) \\\\n',
    );
  });

  test('block markers at a line start are escaped; the same characters inside a line are left', () => {
    expect(markdownText('- a\n+ b\n===\n12. c\n3) d\n> e\nx - y + z = 1. w')).toBe(
      '\\- a  \n\\+ b  \n\\===  \n12\\. c  \n3\\) d  \n\\> e  \nx - y + z = 1. w',
    );
  });

  test('indentation cannot start a code block; blank lines separate paragraphs; CRLF is a line break', () => {
    expect(markdownText('    code?\n\tcode?\r\nnext\n\n\n  \npara')).toBe(
      '\u00a0\u00a0\u00a0\u00a0code?  \n\u00a0\u00a0\u00a0\u00a0code?  \nnext\n\npara',
    );
  });

  test('inline text is one line; a quote prefixes every line', () => {
    expect(markdownInline('a\n# b\r\n  c ')).toBe('a \\# b c');
    expect(markdownQuote('one\ntwo\n\nthree', '  ')).toBe('  > one  \n  > two\n  > \n  > three');
  });
});

describe('the file name and its header', () => {
  test('the chat name without what file systems and headers refuse', () => {
    expect(safeFileName('a/b\\c:d*e?f"g<h>i|j\u0000k\nl', 'md')).toBe('a b c d e f g h i j k l.md');
    expect(safeFileName('...hidden', 'json')).toBe('hidden.json');
    expect(safeFileName(' \n\t/ ', 'md')).toBe('chat.md');
    expect(safeFileName('x'.repeat(300), 'md')).toBe(`${'x'.repeat(100)}.md`);
  });

  test('RFC 6266: an ASCII fallback that cannot end its quotes, and the exact name percent-encoded', () => {
    expect(contentDisposition('Zoë\'s "notes" 100%\\(1)*.md')).toBe(
      "attachment; filename=\"Zo_'s _notes_ 100__(1)*.md\"; filename*=UTF-8''Zo%C3%AB%27s%20%22notes%22%20100%25%5C%281%29%2A.md",
    );
    // No CR or LF can reach the header, and a lone surrogate (no UTF-8 form) does not throw.
    expect(contentDisposition('a\r\nSet-Cookie: x\ud800.md')).toBe(
      'attachment; filename="a__Set-Cookie: x_.md"; filename*=UTF-8\'\'a%0D%0ASet-Cookie%3A%20x%EF%BF%BD.md',
    );
  });
});

test('citations are the cited sources, numbered by their position among all sources', () => {
  const source = (page: number, cited: boolean) => ({
    fileId: 'f',
    page,
    chunk: 0,
    score: 1,
    quote: `q${page}`,
    cited,
  });
  expect(citationsOf([source(1, false), { ...source(2, true), fileName: 'a.pdf' }, source(3, true)])).toEqual([
    { n: 2, fileName: 'a.pdf', page: 2, quote: 'q2' },
    { n: 3, page: 3, quote: 'q3' },
  ]);
  expect(citationsOf(undefined)).toEqual([]);
});

describe('requestBaseUrl', () => {
  const event = (o: { headers?: Record<string, string>; path?: string; domainName?: string }) =>
    ({
      headers: o.headers ?? {},
      requestContext: { path: o.path ?? '/api/v1/chat/c1/share', ...(o.domainName && { domainName: o.domainName }) },
    }) as unknown as APIGatewayProxyEvent;
  const route = { path: '/chat/{chatId}/share' };

  test('deployed: the domain API Gateway names, https, the stage (and any base path) before the route', () => {
    const deployed = event({
      headers: { Host: 'evil.example', 'X-Forwarded-Proto': 'https' },
      domainName: 'abc.execute-api.eu-west-1.amazonaws.com',
    });
    expect(requestBaseUrl(deployed, route)).toBe('https://abc.execute-api.eu-west-1.amazonaws.com/api/v1');
    const mapped = event({
      domainName: 'api.example.com',
      path: '/chat-api/v1/chat/c1/share',
      headers: { 'x-forwarded-proto': 'https' },
    });
    expect(requestBaseUrl(mapped, route)).toBe('https://api.example.com/chat-api/v1');
  });

  test('locally: the Host header over http; a host that is not one is refused', () => {
    expect(requestBaseUrl(event({ headers: { host: 'localhost:3000' } }), route)).toBe('http://localhost:3000/api/v1');
    expect(() => requestBaseUrl(event({ headers: { host: 'a b/c' } }), route)).toThrow('names no host');
  });
});
