import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { htmlReader, markdownReader, textReader } from '#shared/readers/markup/index.ts';
import { SECTION_TARGET_CHARS } from '#shared/readers/sections.ts';
import {
  DEFAULT_READER_LIMITS,
  type DocumentPart,
  type DocumentReader,
  type ReaderLimits,
  ReadRefused,
  type RefusalReason,
} from '#shared/readers/reader.ts';
import { installTripwire, type Tripwire } from '#test/helpers/loopback-tripwire.ts';

// Hostile markup: whatever a document references is never fetched (a loopback server counts the
// requests; a tripwire refuses any other address), and nesting, size and pathological syntax
// fail typed or read within bounds, with bounded memory (what is kept after the read; time is
// measured in bench/, never asserted here).

const utf8 = (text: string) => new TextEncoder().encode(text);
const N = 100_000;
const HEAP_BOUND = 100 * 1024 * 1024;

let server: Server;
let base: string;
let requests: string[];
let tripwire: Tripwire;

beforeAll(async () => {
  requests = [];
  server = createServer((request, response) => {
    requests.push(request.url ?? '');
    response.end('fetched');
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  tripwire = installTripwire();
});

afterAll(async () => {
  tripwire.uninstall();
  server.close();
  await once(server, 'close');
});

/** The reader's parts, or its refusal's reason; and how much the heap grew meanwhile. */
async function outcome(reader: DocumentReader, source: string, limits: ReaderLimits = DEFAULT_READER_LIMITS) {
  const bytes = utf8(source);
  const before = process.memoryUsage().heapUsed;
  let result: DocumentPart[] | RefusalReason;
  try {
    result = await reader.read(bytes, limits);
  } catch (error) {
    if (!(error instanceof ReadRefused)) throw error;
    result = error.reason;
  }
  const growth = process.memoryUsage().heapUsed - before;
  expect(growth).toBeLessThan(HEAP_BOUND);
  return result;
}

/** After the reads: one request of the test's own arrives, and it is the only one there ever was. */
async function expectNothingFetched() {
  expect(await (await fetch(`${base}/probe-after-reading`)).text()).toBe('fetched');
  expect(requests).toEqual(['/probe-after-reading']);
  expect(tripwire.attempts).toEqual([]);
  requests.length = 0;
}

test('nothing an HTML page references is fetched: images, styles, frames, scripts, objects, refreshes', async () => {
  const u = (path: string) => `${base}/${path}`;
  const page = `<!DOCTYPE html>
<html><head>
<base href="${u('base/')}">
<meta http-equiv="refresh" content="0; url=${u('refresh')}">
<link rel="stylesheet" href="${u('style.css')}"><link rel="preload" href="${u('preload')}" as="image">
<link rel="prefetch" href="${u('prefetch')}"><link rel="dns-prefetch" href="${u('dns')}"><link rel="icon" href="${u('icon')}">
<link rel="import" href="${u('import.html')}">
<style>@import url("${u('imported.css')}"); body { background: url(${u('background.png')}) }
@font-face { font-family: x; src: url(${u('font.woff2')}) }</style>
<script src="${u('script.js')}"></script><script>fetch("${u('inline-script')}")</script>
<script type="module">import "${u('module.js')}"</script>
</head>
<body background="${u('body-background')}" onload="fetch('${u('onload')}')">
<main>
<h1>Harbour</h1><p>The harbour text.</p>
<img src="${u('image.png')}" srcset="${u('image-2x.png')} 2x, ${u('image-wide.png')} 800w" alt="">
<picture><source srcset="${u('source.webp')}"><img src="${u('picture.png')}"></picture>
<div style="background-image: url('${u('inline-style.png')}')">Styled text.</div>
<iframe src="${u('frame.html')}"></iframe><frame src="${u('frame2.html')}">
<object data="${u('object.swf')}"></object><embed src="${u('embed.swf')}">
<video src="${u('video.mp4')}" poster="${u('poster.jpg')}"><track src="${u('track.vtt')}"></video>
<audio src="${u('audio.mp3')}"></audio>
<svg><image href="${u('svg-image.png')}"/><use href="${u('sprite.svg#x')}"/></svg>
<template><img src="${u('template.png')}"></template>
<form action="${u('form')}"><input type="image" src="${u('input.png')}"></form>
<a href="${u('link')}" ping="${u('ping')}">a link</a>
<table background="${u('table-background')}"><tr><td>Cell</td></tr></table>
</main></body></html>`;
  const parts = await outcome(htmlReader, page);
  expect(Array.isArray(parts) && parts.map((p) => p.text)).toEqual([
    'Harbour The harbour text. Styled text. a link\n| Cell |',
  ]);
  await expectNothingFetched();
});

test('nothing a Markdown file references is fetched: images, links, reference links, HTML blocks', async () => {
  const u = (path: string) => `${base}/${path}`;
  const markdown = `# Notes\n\n![image](${u('md-image.png')}) [link](${u('md-link')}) <${u('autolink')}>\n\n![ref][r]\n\n[r]: ${u('md-ref.png')}\n\n<img src="${u('md-html-image.png')}">\n\n<iframe src="${u('md-frame')}"></iframe>\n\nText <img src="${u('inline-html.png')}"> after.\n`;
  const parts = await outcome(markdownReader, markdown);
  expect(Array.isArray(parts) && parts.map((p) => p.text)).toEqual([`Notes link ${u('autolink')} Text after.`]);
  await expectNothingFetched();
});

test('an HTML page declaring entities in a DTD does not expand them (no billion laughs, no external entities)', async () => {
  const laughs = Array.from({ length: 10 }, (_, k) => `<!ENTITY l${k + 1} "${`&l${k};`.repeat(10)}">`).join('');
  const page = `<!DOCTYPE html [<!ENTITY l0 "lol">${laughs}<!ENTITY ext SYSTEM "${base}/external-entity">]>
<html><body><p>&l10; and &ext; stay as written.</p></body></html>`;
  const parts = await outcome(htmlReader, page);
  // The declaration ends at its first '>' (as in a browser): what follows it is text, unexpanded.
  expect(Array.isArray(parts) && parts.map((p) => p.text)).toEqual([']> &l10; and &ext; stay as written.']);
  await expectNothingFetched();
});

describe('HTML nesting and size', () => {
  test.each([
    ['nested <div>', `${'<div>'.repeat(N)}deep${'</div>'.repeat(N)}`],
    ['unclosed <span>', `<p>${'<span>'.repeat(N)}deep`],
    ['nested lists', `${'<ul><li>'.repeat(N)}deep`],
    ['nested tables', `${'<table><tr><td>'.repeat(N)}deep`],
    ['nested dropped elements', `<main><p>x</p>${'<nav>'.repeat(N)}</main>`],
    ['a deep page under <body>', `<html><body>${'<section><div>'.repeat(N / 2)}deep`],
  ])('%s (100,000 elements) are refused as TOO_COMPLEX', async (_, page) => {
    expect(await outcome(htmlReader, page)).toBe('TOO_COMPLEX');
  });

  test('the depth bound is exact: maxDepth elements read, one more is refused', async () => {
    const limits = { ...DEFAULT_READER_LIMITS, maxDepth: 20 };
    const nested = (depth: number) => `${'<div>'.repeat(depth)}deep${'</div>'.repeat(depth)}`;
    const within = await outcome(htmlReader, nested(20), limits);
    expect(Array.isArray(within) && within.map((p) => p.text)).toEqual(['deep']);
    expect(await outcome(htmlReader, nested(21), limits)).toBe('TOO_COMPLEX');
    expect(await outcome(markdownReader, `${'> '.repeat(30)}deep`, limits)).toBe('TOO_COMPLEX');
  });

  test('100,000 elements side by side, and stray closing tags, read within bounds', async () => {
    const flat = await outcome(
      htmlReader,
      `<p>${'<b>x</b>'.repeat(N)}</p>${'</div></li>'.repeat(N)}${'<p>'.repeat(N)}`,
    );
    expect(Array.isArray(flat) && flat.map((p) => p.text).join('')).toBe('x'.repeat(N));
  });

  test('a page longer than maxTextChars is refused as TOO_COMPLEX, before or after decoding', async () => {
    const limits = { ...DEFAULT_READER_LIMITS, maxTextChars: 10_000 };
    expect(await outcome(htmlReader, `<p>${'a'.repeat(10_000)}</p>`, limits)).toBe('TOO_COMPLEX');
    expect(await outcome(htmlReader, `<p>${'a'.repeat(50_000)}</p>`, limits)).toBe('TOO_COMPLEX');
    expect(await outcome(markdownReader, 'word '.repeat(3_000), limits)).toBe('TOO_COMPLEX');
    expect(await outcome(textReader, 'word '.repeat(3_000), limits)).toBe('TOO_COMPLEX');
    const within = await outcome(htmlReader, `<p>${'a'.repeat(9_000)}</p>`, limits);
    expect(Array.isArray(within) && within.map((p) => p.text.length)).toEqual([8_000, 1_000]);
  });
});

describe('pathological Markdown', () => {
  test.each([
    ['100,000 nested quotes on one line', `${'>'.repeat(N)} deep`],
    ['quotes nesting one more each line', Array.from({ length: 2_000 }, (_, k) => `${'>'.repeat(k)} x`).join('\n')],
    ['lists nesting one more each line', Array.from({ length: 2_000 }, (_, k) => `${'  '.repeat(k)}- x`).join('\n')],
    ['100,000 nested list markers on one line', `${'- '.repeat(N)}deep`],
    ['an HTML block nesting 100,000 elements', `<div>\n${'<div>'.repeat(N)}\n`],
  ])('%s: refused as TOO_COMPLEX', async (_, markdown) => {
    expect(await outcome(markdownReader, markdown)).toBe('TOO_COMPLEX');
  });

  test.each([
    ['100,000 [', '['.repeat(N), '['.repeat(N)],
    ['100,000 unclosed links', '[a]('.repeat(N), '[a]('.repeat(N)],
    ['25,000 nested link labels', `${'['.repeat(N / 4)}x${'](y)'.repeat(N / 4)}`, undefined],
    ['100,000 emphasis runs', `${'_'.repeat(N)}x${'_'.repeat(N)}`, 'x'],
    ['100,000 backtick runs of two lengths', '`a``'.repeat(N / 4), undefined],
    ['100,000 unclosed tags', '<a '.repeat(N), '<a '.repeat(N).trim()],
  ])('%s: read within bounds', async (_, markdown, expected) => {
    const parts = await outcome(markdownReader, markdown);
    expect(Array.isArray(parts)).toBe(true);
    const text = (parts as DocumentPart[]).map((p) => p.text).join(' ');
    for (const part of parts as DocumentPart[]) expect(part.text.length).toBeLessThanOrEqual(SECTION_TARGET_CHARS);
    // Every character read (a part boundary may fall inside a run without spaces).
    const unspaced = text.replaceAll(' ', '');
    if (expected !== undefined) expect(unspaced === expected.replaceAll(' ', '')).toBe(true);
    else expect(unspaced.length).toBeGreaterThan(N / 4);
  });

  test('20,000 level-3 headings and nothing else: parts stay within the size of a part', async () => {
    const parts = await outcome(
      markdownReader,
      Array.from({ length: 20_000 }, (_, k) => `### Heading ${k}`).join('\n'),
    );
    expect(Array.isArray(parts)).toBe(true);
    for (const part of parts as DocumentPart[]) expect(part.text.length).toBeLessThanOrEqual(SECTION_TARGET_CHARS);
    expect((parts as DocumentPart[]).flatMap((p) => p.blocks)).toHaveLength(20_000);
  });

  test('a table header of 10,000 columns over short rows: the filled-in cells stay bounded', async () => {
    const header = `${'|h'.repeat(10_000)}|\n${'|-'.repeat(10_000)}|\n`;
    const parts = await outcome(markdownReader, `${header}${'|a\n'.repeat(1_000)}`);
    expect(Array.isArray(parts)).toBe(true);
    const rows = (parts as DocumentPart[]).flatMap((p) => p.blocks.flatMap((b) => (b.kind === 'table' ? b.rows : [])));
    // markdown-it fills in at most 65,536 missing cells, then ends the table; the rest is prose.
    expect(rows.length).toBeLessThan(1_000);
    expect(rows.length).toBeGreaterThan(1);
  });
});

describe('hostile plain text', () => {
  test('a 2 MB line without breaks is cut into parts of at most 8,000 characters', async () => {
    const parts = await outcome(textReader, 'word '.repeat(400_000));
    expect(Array.isArray(parts)).toBe(true);
    for (const part of parts as DocumentPart[]) expect(part.text.length).toBeLessThanOrEqual(SECTION_TARGET_CHARS);
    expect((parts as DocumentPart[]).reduce((n, p) => n + p.text.split(' ').length, 0)).toBe(400_000);
  });

  test('control characters are read as spaces; binary data is refused as UNSUPPORTED_TYPE', async () => {
    const parts = await outcome(textReader, 'bell\u0007 and\u001b escape\u0085 next');
    expect(Array.isArray(parts) && parts.map((p) => p.text)).toEqual(['bell and escape next']);
    const before = process.memoryUsage().heapUsed;
    await expect(textReader.read(new Uint8Array(1_000_000).fill(0), DEFAULT_READER_LIMITS)).rejects.toMatchObject({
      reason: 'UNSUPPORTED_TYPE',
    });
    expect(process.memoryUsage().heapUsed - before).toBeLessThan(HEAP_BOUND);
  });
});
