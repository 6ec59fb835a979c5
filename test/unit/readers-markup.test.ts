import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { projectRoot } from '#infra/build.ts';
import {
  decodeText,
  detectMarkup,
  htmlReader,
  looksLikeText,
  markdownReader,
  textReader,
} from '#shared/readers/markup/index.ts';
import { SECTION_TARGET_CHARS } from '#shared/readers/sections.ts';
import { readDocument } from '#shared/readers/documents.ts';
import {
  DEFAULT_READER_LIMITS,
  type DocumentPart,
  type DocumentReader,
  partTextOf,
  ReadRefused,
} from '#shared/readers/reader.ts';

// The markup and text readers: text decoding, detection from the bytes, the main content of a
// page, Markdown's structure, sections under heading paths, and real files nobody here wrote.

const FIXTURES = join(projectRoot, 'test/fixtures/documents');
const utf8 = (text: string) => new TextEncoder().encode(text);
const read = (reader: DocumentReader, source: string | Uint8Array) =>
  reader.read(typeof source === 'string' ? utf8(source) : source, DEFAULT_READER_LIMITS);
const allText = (parts: DocumentPart[]) => parts.map((p) => p.text).join('\n');
const paths = (parts: DocumentPart[]) => parts.map((p) => (p.location.type === 'section' ? p.location.path : []));

/** The refusal a call throws (fails the test when it does not throw one). */
function refusalOf(call: () => unknown): ReadRefused {
  try {
    call();
  } catch (error) {
    if (error instanceof ReadRefused) return error;
    throw error;
  }
  throw new Error('expected a ReadRefused');
}

/** Every part as readers must give it: text = its blocks joined, each line normalised. */
function expectWellFormed(parts: DocumentPart[]) {
  expect(parts.length).toBeGreaterThan(0);
  for (const part of parts) {
    expect(part.text).toBe(partTextOf(part.blocks));
    for (const block of part.blocks) {
      const lines = block.kind === 'table' ? block.rows.map((r) => r.text) : [block.text];
      for (const line of lines) expect(line).toMatch(/^\S(?:.*\S)?$/);
      if (block.kind !== 'table') expect(block.text).not.toMatch(/\s{2}|\n/);
    }
  }
}

describe('decoding text', () => {
  const sample = 'Grüße, 日本語 and 😀 — a line\nand another';
  const utf16 = (text: string, bigEndian: boolean) => {
    const bytes = new Uint8Array(2 + text.length * 2);
    bytes.set(bigEndian ? [0xfe, 0xff] : [0xff, 0xfe]);
    for (let k = 0; k < text.length; k++) {
      const unit = text.charCodeAt(k);
      bytes[2 + 2 * k + (bigEndian ? 0 : 1)] = unit >> 8;
      bytes[2 + 2 * k + (bigEndian ? 1 : 0)] = unit & 0xff;
    }
    return bytes;
  };

  test('UTF-8 with or without a BOM, UTF-16 LE and BE with a BOM, the BOM dropped', () => {
    expect(decodeText(utf8(sample))).toBe(sample);
    expect(decodeText(new Uint8Array([0xef, 0xbb, 0xbf, ...utf8(sample)]))).toBe(sample);
    expect(decodeText(utf16(sample, false))).toBe(sample);
    expect(decodeText(utf16(sample, true))).toBe(sample);
    expect(looksLikeText(utf16(sample, true))).toBe(true);
  });

  test('the text reader reads UTF-16 LE and BE files', async () => {
    for (const bigEndian of [false, true]) {
      const parts = await read(textReader, utf16('First paragraph, ünïcode.\r\n\r\nSecond 😀 paragraph.', bigEndian));
      expect(parts.map((p) => p.text)).toEqual(['First paragraph, ünïcode. Second 😀 paragraph.']);
    }
  });

  test('control bytes throughout are binary data past a tenth of the bytes, wherever the bytes start in memory', () => {
    // Counted four bytes at a time: every alignment, controls in every byte position, whitespace and ESC not counted.
    const text = (controls: number) => {
      const bytes = new Uint8Array(1003).fill(0x61);
      for (let k = 0; k < 1003; k += 7) bytes[k] = [0x09, 0x0a, 0x0c, 0x0d, 0x1b][k % 5]!;
      for (let k = 0; k < controls; k++) bytes[(k * 13) % 1003 === 0 ? 1 : (k * 13) % 1003] = 0x01 + (k % 8);
      return bytes;
    };
    for (let offset = 0; offset < 4; offset++) {
      const at = (bytes: Uint8Array) => {
        const moved = new Uint8Array(bytes.length + offset);
        moved.set(bytes, offset);
        return moved.subarray(offset);
      };
      expect(decodeText(at(text(100)))).toHaveLength(1003);
      expect(refusalOf(() => decodeText(at(text(101)))).message).toMatch(/control bytes throughout/);
    }
  });

  test('bytes that are not text are refused as UNSUPPORTED_TYPE, saying what they look like', () => {
    const cases: [Uint8Array, RegExp][] = [
      [new Uint8Array([0x25, 0x50, 0x44, 0x46, 0x2d, 0x31, 0x2e, 0x37, 0x0a]), /a PDF/],
      [new Uint8Array([0x50, 0x4b, 0x03, 0x04, 0, 0, 0]), /zip package/],
      [new Uint8Array([0xd0, 0xcf, 0x11, 0xe0, 0xa1, 0xb1, 0x1a, 0xe1, 0]), /legacy binary Office file/],
      [new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a]), /PNG image/],
      [new Uint8Array([0x63, 0x61, 0x66, 0xe9, 0x20, 0x61]), /not valid UTF-8.*Windows-1252/], // "café" in Latin-1
      [new Uint8Array([0x41, 0x42, 0x00, 0x01, 0x02, 0x03, 0x43]), /binary data \(a NUL byte at offset 2\)/],
      [new Uint8Array([...'plain text'].flatMap((c) => [c.charCodeAt(0), 0])), /UTF-16 text without a byte-order mark/],
      [new Uint8Array([0xff, 0xfe, 0x41, 0x00, 0x42]), /odd number of bytes/],
      [new Uint8Array([0xff, 0xfe, 0x00, 0xdc, 0x41, 0x00]), /not valid UTF-16LE/],
    ];
    for (const [bytes, message] of cases) {
      const refusal = refusalOf(() => decodeText(bytes));
      expect(refusal.reason).toBe('UNSUPPORTED_TYPE');
      expect(refusal.message).toMatch(message);
      expect(looksLikeText(bytes)).toBe(false);
    }
  });

  test('looksLikeText judges a prefix: a character cut at its end passes, binary data past it is caught by decodeText', () => {
    const long = utf8(`${'é'.repeat(40_000)}`); // 80,000 bytes: the 64 KiB prefix ends inside no character, then inside one
    expect(looksLikeText(long)).toBe(true);
    expect(looksLikeText(long.subarray(0, 65_537))).toBe(true); // ends with half of "é"
    const binaryTail = new Uint8Array([...utf8('a'.repeat(70_000)), 0, 1, 2]);
    expect(looksLikeText(binaryTail)).toBe(true);
    const refusal = refusalOf(() => decodeText(binaryTail));
    expect([refusal.reason, refusal.message]).toEqual([
      'UNSUPPORTED_TYPE',
      'The file is binary data past its start (a NUL byte at offset 70000), not text; it cannot be read as text.',
    ]);
  });
});

describe('detecting the markup from the bytes', () => {
  test('HTML by how it opens, after a BOM, whitespace and comments', () => {
    expect(detectMarkup(utf8('\ufeff  <!-- generated -->\n<!DOCTYPE html><html><body>x</body></html>'))).toBe('html');
    expect(detectMarkup(utf8('<html lang="en"><p>x'))).toBe('html');
    expect(detectMarkup(utf8('<?xml version="1.0"?>\n<html xmlns="http://www.w3.org/1999/xhtml">'))).toBe('html');
    expect(detectMarkup(utf8('<head><title>t</title></head>'))).toBe('html');
    expect(detectMarkup(utf8('<div class="note"><p>Just a fragment.</p></div>'))).toBe('html');
  });

  test('Markdown by its structure, even when it opens with an HTML block', () => {
    const readme =
      '<p align="center"><img src="logo.png"></p>\n\n# Tool\n\nSee [the docs](https://example.com).\n\n## Install\n\n```sh\nnpm i tool\n```\n';
    expect(detectMarkup(utf8(readme))).toBe('markdown');
    expect(detectMarkup(utf8('Title\n=====\n\nSome text.\n\n| a | b |\n|---|---|\n| 1 | 2 |\n'))).toBe('markdown');
    expect(detectMarkup(utf8('Intro line\n\n## Usage\n\n- one\n- two\n'))).toBe('markdown');
  });

  test('any other text is plain text; bytes that are not text are nothing', () => {
    expect(detectMarkup(utf8('Dear team,\n\nThe meeting moves to 3 pm.\n- Ana\n'))).toBe('text');
    expect(detectMarkup(utf8('x < y and a > b, in 2 < 3 lines\n'))).toBe('text');
    expect(detectMarkup(utf8(''))).toBe('text');
    expect(detectMarkup(new Uint8Array([0x25, 0x50, 0x44, 0x46, 0x2d, 0x31]))).toBeUndefined();
    expect(detectMarkup(new Uint8Array([0x00, 0x01, 0x02]))).toBeUndefined();
  });

  test('the real files are told apart', () => {
    const kinds = ['rustdoc-what-is-rustdoc.html', 'libffi-the-basics.html', 'htmlparser2-readme.md'].map((name) =>
      detectMarkup(readFileSync(join(FIXTURES, name))),
    );
    expect(kinds).toEqual(['html', 'html', 'markdown']);
  });
});

describe('HTML: the main content, not the navigation', () => {
  const page = `<!DOCTYPE html>
<html><head><title>Harbour guide — Example Site</title>
<style>body { color: red } .stylesheet-text {}</style>
<script>var scriptText = "script text";</script></head>
<body class="sidebar-visible">
<header><a href="/">Site header text</a></header>
<nav><ul><li><a href="/a">Nav link one</a></li><li>Nav link two</li></ul></nav>
<div class="breadcrumbs">Home › Guides</div>
<p>Body text outside main.</p>
<main>
  <h1>Harbour guide</h1>
  <p>The harbour opens at <b>six</b>&nbsp;o&#39;clock &amp; closes at dusk.</p>
  <!-- a comment that is not text -->
  <aside>Aside text</aside>
  <form><label>Form text</label><input value="input text"></form>
  <noscript>Noscript text</noscript><template><p>Template text</p></template>
  <iframe src="/frame">Iframe text</iframe><svg><text>SVG text</text></svg>
  <div hidden>Hidden text</div><div style="display: none">Undisplayed text</div>
  <h2>Fees</h2>
  <table>
    <caption>Mooring fees</caption>
    <tbody><tr><td>Dinghy</td><td>5 €</td></tr><tr><td>Yacht</td><td>40 €</td></tr></tbody>
    <thead><tr><th>Boat</th><th>Fee | per night</th></tr></thead>
  </table>
  <h3>Discounts</h3>
  <ul><li>Members pay half.</li><li>Winter is free.</li></ul>
  <h2>Rules</h2>
  <pre>  no   swimming
  in the harbour</pre>
  <article><header><h3>Article header heading</h3></header><p>Article text.</p></article>
</main>
<footer>Site footer text</footer>
</body></html>`;

  test('navigation, page header and footer, scripts, styles, forms, frames and hidden text are in no part', async () => {
    const parts = await read(htmlReader, page);
    expectWellFormed(parts);
    const text = allText(parts);
    for (const absent of [
      'Site header', 'Nav link', 'Home › Guides', 'outside main', 'Aside', 'Form text', 'input text',
      'Noscript', 'Template', 'Iframe', 'SVG text', 'Hidden', 'Undisplayed', 'Site footer', 'script',
      'color', 'stylesheet', 'comment',
    ]) expect(text).not.toContain(absent); // biome-ignore format: a word list
    expect(text).toContain("The harbour opens at six o'clock & closes at dusk.");
    expect(text).toContain('Article header heading Article text.');
  });

  test('headings give the parts and their paths; a table reads as rows, its header first', async () => {
    const parts = await read(htmlReader, page);
    expect(paths(parts)).toEqual([['Harbour guide'], ['Harbour guide', 'Fees'], ['Harbour guide', 'Rules']]);
    const fees = parts[1]!;
    expect(fees.blocks.map((b) => b.kind)).toEqual(['heading', 'text', 'table', 'heading', 'text', 'text']);
    const table = fees.blocks[2]!;
    expect(table.kind === 'table' && table.rows.map((r) => r.text)).toEqual([
      '| Boat | Fee \\| per night |',
      '| Dinghy | 5 € |',
      '| Yacht | 40 € |',
    ]);
    expect(fees.text).toBe(
      'Fees Mooring fees\n| Boat | Fee \\| per night |\n| Dinghy | 5 € |\n| Yacht | 40 € |\nDiscounts Members pay half. Winter is free.',
    );
    expect(parts[2]!.text).toBe('Rules no swimming in the harbour Article header heading Article text.');
    // The title repeats the first heading, so it is not read twice.
    expect(parts[0]!.text).toBe("Harbour guide The harbour opens at six o'clock & closes at dusk.");
  });

  test('a table without <thead> has its first row as header; articles are kept when there is no <main>', async () => {
    const parts = await read(
      htmlReader,
      `<html><head><title>News</title></head><body><nav>Menu</nav><p>Teaser outside.</p>
       <article><h2>Story one</h2><table><tr><td>Year</td><td>Count</td></tr><tr><td>2024</td><td>7</td></tr></table></article>
       <article><h2>Story two</h2><p>Second story.</p></article></body></html>`,
    );
    // The title leads as the page's level-1 heading (its first heading is a level 2).
    expect(paths(parts)).toEqual([['News'], ['News', 'Story one'], ['News', 'Story two']]);
    expect(parts[0]!.text).toBe('News');
    expect(parts[1]!.text).toBe('Story one\n| Year | Count |\n| 2024 | 7 |');
    expect(allText(parts)).not.toMatch(/Menu|Teaser/);
  });

  test('a page without main or article reads its body; text before the first heading has an empty path', async () => {
    const parts = await read(
      htmlReader,
      '<body><p>Preface.</p><h1>One</h1><p>A.</p><h4>Deep</h4><p>B.</p><h2>Two</h2><p>C.</p></body>',
    );
    expect(parts.map((p) => [p.location, p.text])).toEqual([
      [{ type: 'section', path: [] }, 'Preface.'],
      [{ type: 'section', path: ['One'] }, 'One A. Deep B.'],
      [{ type: 'section', path: ['One', 'Two'] }, 'Two C.'],
    ]);
  });

  test('a table inside a heading ends the heading; a table inside a cell reads as that cell', async () => {
    const parts = await read(
      htmlReader,
      '<h2>Title<table><tr><th>a</th><th>b</th></tr><tr><td><table><tr><td>in</td><td>ner</td></tr></table></td><td>c</td></tr></table></h2><p>after</p>',
    );
    expect(parts.map((p) => [p.location, p.text])).toEqual([
      [{ type: 'section', path: ['Title'] }, 'Title\n| a | b |\n| in ner | c |\nafter'],
    ]);
  });

  test('an empty page is one empty part', async () => {
    expect(await read(htmlReader, '<html><body><nav>only navigation</nav></body></html>')).toEqual([
      { text: '', blocks: [], location: { type: 'section', path: [] } },
    ]);
  });
});

describe('Markdown', () => {
  const doc = `---
title: front matter is metadata
---
# Field notes

Intro with a [link](https://example.com/x) and \`code\`, *emphasis* and an image ![badge](https://img.example/b.svg).

Setext section
--------------

- first item
- second item
  1. nested item

> quoted line

\`\`\`js
const answer = 42;
\`\`\`

| Species | Count |
|:--------|------:|
| Heron   | 3     |
| Egret \\| white | 5 |

<h2 align="center">HTML heading</h2>

### Deeper
Closing words &amp; \\*escaped\\* stars,<br>then a break.
`;

  test('headings, paragraphs, lists, quotes, code and GFM tables, in sections', async () => {
    const parts = await read(markdownReader, doc);
    expectWellFormed(parts);
    expect(paths(parts)).toEqual([['Field notes'], ['Field notes', 'Setext section'], ['Field notes', 'HTML heading']]);
    expect(parts[0]!.text).toBe('Field notes Intro with a link and code, emphasis and an image .');
    const setext = parts[1]!;
    expect(setext.text).toBe(
      'Setext section first item second item nested item quoted line const answer = 42;\n| Species | Count |\n| Heron | 3 |\n| Egret \\| white | 5 |',
    );
    const table = setext.blocks.at(-1)!;
    expect(table.kind === 'table' && table.rows[0]!.cells.map((c) => c.text)).toEqual(['Species', 'Count']);
    expect(parts[2]!.text).toBe('HTML heading Deeper Closing words & *escaped* stars, then a break.');
    expect(allText(parts)).not.toContain('front matter');
  });

  test('text before the first heading has an empty path; an empty document is one empty part', async () => {
    expect(paths(await read(markdownReader, 'Preface.\n\n## Later\n\nText.'))).toEqual([[], ['Later']]);
    expect(await read(markdownReader, '')).toEqual([{ text: '', blocks: [], location: { type: 'section', path: [] } }]);
  });
});

describe('sections', () => {
  const sentence = (k: number) => `Sentence number ${k} says something about the harbour and its boats.`;

  test('a long section is cut at block boundaries past ~8,000 characters, keeping its path', async () => {
    const paragraphs = Array.from({ length: 400 }, (_, k) => `<p>${sentence(k)}</p>`).join('');
    const parts = await read(
      htmlReader,
      `<h1>Book</h1><h2>Long chapter</h2><h3>Inner</h3>${paragraphs}<h2>Next</h2><p>End.</p>`,
    );
    const long = parts.filter((p) => p.location.type === 'section' && p.location.path[1] === 'Long chapter');
    expect(long.length).toBeGreaterThan(2);
    for (const part of long) {
      expect(part.text.length).toBeLessThanOrEqual(SECTION_TARGET_CHARS);
      if (part !== long.at(-1)) expect(part.text.length).toBeGreaterThan(SECTION_TARGET_CHARS - 200);
      expect(part.blocks[0]!.kind === 'heading' || /^Sentence number \d+ /.test(part.text)).toBe(true);
    }
    expect(paths(long)).toEqual([
      ['Book', 'Long chapter'],
      ...long.slice(1).map(() => ['Book', 'Long chapter', 'Inner']),
    ]);
    expect(paths(parts).at(-1)).toEqual(['Book', 'Next']);
    // Nothing lost, nothing repeated.
    const sentences = allText(parts).match(/Sentence number \d+/g);
    expect(sentences).toEqual(Array.from({ length: 400 }, (_, k) => `Sentence number ${k}`));
  });

  test('a long table is cut between rows, its header repeated in each part', async () => {
    const rows = Array.from({ length: 600 }, (_, k) => `| row ${k} | ${sentence(k)} |`).join('\n');
    const parts = await read(markdownReader, `## Data\n\n| Key | Value |\n|---|---|\n${rows}\n`);
    expect(parts.length).toBeGreaterThan(3);
    for (const part of parts) {
      const table = part.blocks.find((b) => b.kind === 'table')!;
      expect(table.kind === 'table' && table.rows[0]!.text).toBe('| Key | Value |');
      expect(part.location).toEqual({ type: 'section', path: ['Data'] });
    }
  });

  test('plain text: ~8,000-character runs cut between paragraphs, with an empty path', async () => {
    const text = Array.from({ length: 300 }, (_, k) => `${sentence(k)}\n${sentence(k)}`).join('\n\n');
    const parts = await read(textReader, text);
    expectWellFormed(parts);
    expect(parts.length).toBeGreaterThan(3);
    for (const part of parts) {
      expect(part.location).toEqual({ type: 'section', path: [] });
      expect(part.text.length).toBeLessThanOrEqual(SECTION_TARGET_CHARS);
      expect(part.text).toMatch(/^Sentence number (\d+) .* Sentence number \d+ .*boats\.$/);
    }
    expect(allText(parts).match(/Sentence number \d+/g)).toHaveLength(600);
  });

  test('a text without blank lines is cut between lines, a line without spaces where it must', async () => {
    const lines = Array.from({ length: 2000 }, (_, k) => `log line ${k}`).join('\n');
    const parts = await read(textReader, `${lines}\n\n${'x'.repeat(20_000)}`);
    for (const part of parts) expect(part.text.length).toBeLessThanOrEqual(SECTION_TARGET_CHARS);
    expect(allText(parts).match(/log line \d+/g)).toHaveLength(2000);
    expect(allText(parts).replace(/[^x]/g, '')).toHaveLength(20_000);
  });
});

describe('real files nobody here wrote', () => {
  /** The fixture read by `reader`, its parts well formed. */
  const readFixture = async (reader: DocumentReader, name: string) => {
    const parts = await read(reader, readFileSync(join(FIXTURES, name)));
    expectWellFormed(parts);
    return parts;
  };

  test('an mdBook page (rustdoc book): its content under heading paths, not its sidebar, menu or page links', async () => {
    const parts = await readFixture(htmlReader, 'rustdoc-what-is-rustdoc.html');
    expect(paths(parts)).toEqual([
      ['What is rustdoc?'],
      ['What is rustdoc?', 'Basic usage'],
      ['What is rustdoc?', 'Configuring rustdoc'],
      ['What is rustdoc?', 'Using rustdoc with Cargo'],
      ['What is rustdoc?', 'Outer and inner documentation'],
      ['What is rustdoc?', 'Using standalone Markdown files'],
      ['What is rustdoc?', 'Summary'],
    ]);
    const text = allText(parts);
    expect(parts[0]!.text).toMatch(
      /^What is rustdoc\? The standard Rust distribution ships with a tool called rustdoc\./,
    );
    expect(text).toContain('If you want cargo to automatically open the generated documentation');
    // The keyboard-shortcut help, the menu bar's title and the theme list (the sidebar is an iframe).
    for (const absent of ['Keyboard shortcuts', 'to navigate between chapters', 'The rustdoc book', 'Navy', 'Ayu'])
      expect(text).not.toContain(absent);
  });

  test('a Texinfo page (libffi manual): its navigation panel is not read', async () => {
    const parts = await readFixture(htmlReader, 'libffi-the-basics.html');
    const text = allText(parts);
    expect(paths(parts)).toEqual([['The Basics (libffi: the portable foreign function interface library)']]);
    expect(text).toContain('2.1 The Basics libffi assumes that you have a pointer to the function you wish to call');
    expect(text).not.toMatch(/Next:|Up:|\[Index\]/);
  });

  test("a package's README (htmlparser2): sections, its tables with their header", async () => {
    const parts = await readFixture(markdownReader, 'htmlparser2-readme.md');
    expect(paths(parts)).toEqual([
      ['htmlparser2'],
      ['htmlparser2', 'Installation'],
      ['htmlparser2', 'Ecosystem'],
      ['htmlparser2', 'Usage'],
      ['htmlparser2', 'Getting a DOM'],
      ['htmlparser2', 'Parsing feeds'],
      ['htmlparser2', 'Performance'],
      ['htmlparser2', 'Security contact information'],
    ]);
    const ecosystem = parts[2]!.blocks.find((b) => b.kind === 'table')!;
    expect(ecosystem.kind === 'table' && ecosystem.rows.slice(0, 2).map((r) => r.text)).toEqual([
      '| Name | Description |',
      '| htmlparser2 | Fast & forgiving HTML/XML parser |',
    ]);
    const usage = parts[3]!.blocks.filter((b) => b.kind === 'table');
    expect(usage.map((t) => t.kind === 'table' && t.rows[0]!.text)).toEqual([
      '| Event | Description |',
      '| Option | Type | Default | Description |',
    ]);
    expect(allText(parts)).toContain('The fast & forgiving HTML/XML parser.');
    expect(allText(parts)).not.toMatch(/img\.shields\.io|NPM version/); // badges are images, not text
  });
});

test('a text of a few bytes in a view off a word boundary is read (a pooled Buffer)', async () => {
  for (const [offset, text] of [
    [1, 'hi'],
    [3, ''],
    [2, 'a'],
  ] as const) {
    const padded = new Uint8Array(8);
    padded.set(utf8(text), offset);
    const bytes = padded.subarray(offset, offset + text.length);
    expect(decodeText(bytes)).toBe(text);
    expect((await textReader.read(bytes, DEFAULT_READER_LIMITS)).map((p) => p.text)).toEqual([text]);
  }
  // A file of a UTF-8 byte-order mark alone: text with nothing in it (the pipeline's NO_TEXT_LAYER),
  // not a reader that throws.
  expect(decodeText(new Uint8Array([0xef, 0xbb, 0xbf]))).toBe('');
  const read = await readDocument(new Uint8Array([0xef, 0xbb, 0xbf]), DEFAULT_READER_LIMITS);
  expect({ format: read.format, texts: read.parts.map((p) => p.text) }).toEqual({ format: 'text', texts: [''] });
});
