import { loadConfig } from '#shared/config/all.ts';
import { extractTextBounded } from '#shared/pdf/bounded-extract.ts';
import { extractLimits } from '#shared/ingestion/extract-stage.ts';
import { patchPdfjsWorker } from '#shared/pdf/pdfjs-worker-patch.ts';
import {
  ARABIC_LIGATURE_PAGES,
  HEBREW_LIGATURE_PAGES,
  makeArabicPdf,
  makeHebrewPdf,
} from '#test/helpers/make-script-pdfs.ts';

// Right-to-left words drawn with ligatures come out with their letters in logical order, through
// the extraction child (the bundle that carries the patched pdf.js worker), whether the producer's
// ToUnicode maps a ligature glyph to one presentation-form code point or to the letters it shows.

const limits = extractLimits(loadConfig({ TABLE_NAME: 'rtl' }), { memoryMb: 1536 });

async function pageTexts(pdf: Uint8Array): Promise<string[]> {
  const texts: string[] = [];
  await extractTextBounded(pdf, { maxPages: 10, limits, onPage: (_, text) => void texts.push(text) });
  return texts;
}

const SCRIPTS = {
  Arabic: { make: makeArabicPdf, pages: ARABIC_LIGATURE_PAGES },
  Hebrew: { make: makeHebrewPdf, pages: HEBREW_LIGATURE_PAGES },
};

/** Each case: the script and how its ToUnicode maps a ligature glyph. */
const CASES: Record<string, [keyof typeof SCRIPTS, 'presentation-forms' | 'letters']> = {
  'Arabic, ligatures mapped to presentation forms (lam-khah is Forms-A, lam-alef Forms-B)': [
    'Arabic',
    'presentation-forms',
  ],
  'Arabic, ligatures mapped to the two letters they show': ['Arabic', 'letters'],
  'Hebrew, alef-lamed mapped to its presentation form': ['Hebrew', 'presentation-forms'],
  'Hebrew, alef-lamed mapped to its two letters': ['Hebrew', 'letters'],
};

test.each(Object.entries(CASES))(
  '%s: every word in logical order',
  async (_, [script, mapping]) => {
    const { make, pages } = SCRIPTS[script];
    expect(await pageTexts(make(pages, mapping))).toEqual(pages);
  },
  60_000,
);

test('the words a user types are found: الخطوط, السلام, ישראל, אלון', async () => {
  const arabic = (await pageTexts(makeArabicPdf(ARABIC_LIGATURE_PAGES, 'letters'))).join(' ');
  const hebrew = (await pageTexts(makeHebrewPdf(HEBREW_LIGATURE_PAGES, 'letters'))).join(' ');
  for (const word of ['الخطوط', 'السلام']) expect(arabic.split(/[ .]/)).toContain(word);
  for (const word of ['ישראל', 'אלון']) expect(hebrew.split(/[ .]/)).toContain(word);
}, 60_000);

describe('patchPdfjsWorker', () => {
  const line = 'if (!intersector) {\n  textChunk.str.push(glyphUnicode);\n}';

  test('reverses a multi-letter right-to-left glyph string only, and not in vertical text', () => {
    const patched = patchPdfjsWorker(line);
    const run = new Function(
      'glyphUnicode',
      'vertical',
      `const textChunk = { str: [], vertical }; const intersector = null; ${patched} return textChunk.str[0];`,
    ) as (unicode: string, vertical: boolean) => string;
    expect(run('لا', false)).toBe('ال');
    expect(run('אל', false)).toBe('לא');
    expect(run('ﻻ', false)).toBe('ﻻ');
    expect(run('fi', false)).toBe('fi');
    expect(run('لا', true)).toBe('لا');
  });

  test('fails loudly when pdf.js no longer has the line it rewrites (or has it twice)', () => {
    expect(() => patchPdfjsWorker('textChunk.str.push(other);')).toThrow(/expected exactly one/);
    expect(() => patchPdfjsWorker(`${line}\n${line}`)).toThrow(/expected exactly one/);
  });
});
