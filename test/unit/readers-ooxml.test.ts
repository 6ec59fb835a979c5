import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { projectRoot } from '#infra/build.ts';
import { detectCfb, detectOoxml, docxReader, pptxReader, xlsxReader } from '#shared/readers/ooxml/index.ts';
import { sectionParts } from '#shared/readers/sections.ts';
import { DEFAULT_READER_LIMITS, type DocumentPart, ReadRefused } from '#shared/readers/reader.ts';
import { makeCfb } from '#test/helpers/hostile-ooxml.ts';
import { docxBody, makeDocx, makePptx, makeXlsx, zipParts } from '#test/helpers/ooxml-docs.ts';

const limits = DEFAULT_READER_LIMITS;
const fixture = (name: string) => new Uint8Array(readFileSync(join(projectRoot, 'test/fixtures/documents', name)));
const refusal = async (promise: Promise<unknown>) => {
  const error = await promise.then(
    () => undefined,
    (caught: unknown) => caught,
  );
  expect(error).toBeInstanceOf(ReadRefused);
  return error as ReadRefused;
};
const partWith = (parts: DocumentPart[], text: string) => parts.findIndex((part) => part.text.includes(text));

describe('pptx', () => {
  const deck = makePptx([
    { title: 'Opening', body: ['Welcome to the quarterly review.'] },
    {
      title: 'Numbers',
      table: [
        ['Region', 'Sales'],
        ['North', '120'],
        ['South', '95'],
      ],
    },
    { title: 'Backup material', body: ['Only for questions.'], hidden: true },
    { title: 'Risks', body: ['Supply is tight.'], notes: ['The auditor flagged the Lisbon warehouse twice.'] },
    { title: 'Close', notes: ['Thank everyone.'] },
  ]);

  test("a sentence in slide 4's notes comes out in part 4, located at slide 4, after the slide's body", async () => {
    const parts = await pptxReader.read(deck, limits);
    expect(parts.map((part) => part.location)).toEqual([
      { type: 'slide', slide: 1, title: 'Opening' },
      { type: 'slide', slide: 2, title: 'Numbers' },
      { type: 'slide', slide: 3, title: 'Backup material' },
      { type: 'slide', slide: 4, title: 'Risks' },
      { type: 'slide', slide: 5, title: 'Close' },
    ]);
    expect(partWith(parts, 'The auditor flagged the Lisbon warehouse twice.')).toBe(3);
    expect(parts[3]!.text).toBe('Risks Supply is tight. Notes The auditor flagged the Lisbon warehouse twice.');
    expect(parts[3]!.blocks.map((block) => block.kind)).toEqual(['heading', 'text', 'heading', 'text']);
    // The notes page's slide number placeholder is not notes text.
    expect(parts[4]!.text).toBe('Close Notes Thank everyone.');
  });

  test('a table reads as Markdown rows with its header first; a hidden slide is kept at its number', async () => {
    const parts = await pptxReader.read(deck, limits);
    const table = parts[1]!.blocks[1]!;
    expect(table.kind).toBe('table');
    expect(parts[1]!.text).toBe('Numbers\n| Region | Sales |\n| North | 120 |\n| South | 95 |');
    expect(parts[2]!.text).toBe('Backup material Only for questions.');
  });

  test('slides follow the presentation list, not the slide files', async () => {
    const reordered = makePptx([{ title: 'File one' }, { title: 'File two' }, { title: 'File three' }], {
      order: [2, 0, 1],
    });
    const parts = await pptxReader.read(reordered, limits);
    expect(parts.map((part) => part.location)).toEqual([
      { type: 'slide', slide: 1, title: 'File three' },
      { type: 'slide', slide: 2, title: 'File one' },
      { type: 'slide', slide: 3, title: 'File two' },
    ]);
  });

  test('a real deck (officer 0.6.0 example.pptx) reads slide by slide with titles and its table', async () => {
    const parts = await pptxReader.read(fixture('officer-example.pptx'), limits);
    expect(parts).toHaveLength(3);
    expect(parts[0]!.location).toEqual({ type: 'slide', slide: 1, title: 'Title' });
    expect(parts[0]!.text).toContain('| Header 1 | Header 2 | Header 3 |\n| A | 12.23 | blah blah |');
    expect(parts[1]!.location).toEqual({ type: 'slide', slide: 2, title: 'Hi' });
    expect(parts[1]!.text).toContain('This is an unordered list of paragraphs');
  });
});

describe('xlsx', () => {
  test("visible sheets only, in workbook order; a hidden sheet's text is absent", async () => {
    const book = makeXlsx([
      {
        name: 'Summary',
        rows: [
          ['Item', 'Total'],
          ['Pens', 4],
        ],
      },
      {
        name: 'Salaries',
        state: 'hidden',
        rows: [
          ['Name', 'Salary'],
          ['Ada', 'SECRET-HIDDEN-91'],
        ],
      },
      { name: 'Internal', state: 'veryHidden', rows: [['VERY-HIDDEN-42']] },
      {
        name: 'Stock',
        rows: [
          ['Item', 'Count'],
          ['Ink', 9],
        ],
      },
    ]);
    const parts = await xlsxReader.read(book, limits);
    expect(parts.map((part) => part.location)).toEqual([
      { type: 'sheet', sheet: 'Summary', range: 'A1:B2' },
      { type: 'sheet', sheet: 'Stock', range: 'A1:B2' },
    ]);
    const all = parts.map((part) => part.text).join('\n');
    expect(all).not.toContain('SECRET-HIDDEN-91');
    expect(all).not.toContain('VERY-HIDDEN-42');
    expect(all).not.toContain('Salary');
  });

  test('cells read as their cached values: formulas, booleans, errors, inline strings, numbers as written', async () => {
    const book = makeXlsx([
      {
        name: 'Calc',
        rows: [
          ['What', 'Value'],
          ['sum', { formula: 'SUM(B5:B6)', cached: 42.5 }],
          ['label', { formula: 'CONCAT("a","b")', cached: 'ab' }],
          ['uncached', { formula: 'NOW()' }],
          ['flag', true],
          ['ratio', 0.125],
          ['oops', { error: '#DIV/0!' }],
          ['inline', { inline: 'typed in' }],
        ],
      },
    ]);
    const [part] = await xlsxReader.read(book, limits);
    expect(part!.text).toBe(
      [
        '| What | Value |',
        '| sum | 42.5 |',
        '| label | ab |',
        '| uncached | |',
        '| flag | TRUE |',
        '| ratio | 0.125 |',
        '| oops | #DIV/0! |',
        '| inline | typed in |',
      ].join('\n'),
    );
    expect(part!.text).not.toContain('SUM(');
    expect(part!.rows).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);
    expect(part!.columns).toEqual(['A', 'B']);
  });

  test("date-formatted serials read as dates in the workbook's date system: 1900, or 1904 (workbookPr date1904)", async () => {
    const rows = [
      ['What', 'When'],
      ['new year', { dateSerial: 45292 }],
      ['noon', { dateSerial: 0.5 }],
      ['evening', { dateSerial: 45292.75 }],
      ['plain number', 45292],
    ];
    const read = async (date1904: boolean) =>
      (await xlsxReader.read(makeXlsx([{ name: 'Dates', rows }], { date1904 }), limits))[0]!.text.split('\n');
    expect(await read(false)).toEqual([
      '| What | When |',
      '| new year | 2024-01-01 |',
      '| noon | 12:00 |',
      '| evening | 2024-01-01 18:00 |',
      '| plain number | 45292 |',
    ]);
    // The same serials counted from 1904-01-01: 1,462 days later.
    expect(await read(true)).toEqual([
      '| What | When |',
      '| new year | 2028-01-02 |',
      '| noon | 12:00 |',
      '| evening | 2028-01-02 18:00 |',
      '| plain number | 45292 |',
    ]);
  });

  test('a long sheet splits into parts of 100 rows, each table starting with the header; rows and range follow', async () => {
    const rows = [
      ['Id', 'Name', 'City'],
      ...Array.from({ length: 250 }, (_, k) => [k + 1, `person ${k + 1}`, 'Porto']),
    ];
    const parts = await xlsxReader.read(makeXlsx([{ name: 'People', rows }]), limits);
    expect(parts).toHaveLength(3);
    for (const part of parts) {
      expect(part.text.split('\n')[0]).toBe('| Id | Name | City |');
      expect(part.blocks).toHaveLength(1);
      expect(part.rows!.length).toBe(part.text.split('\n').length);
      expect(part.rows![0]).toBe(1);
      expect(part.columns).toEqual(['A', 'C']);
    }
    expect(parts.map((part) => part.location)).toEqual([
      { type: 'sheet', sheet: 'People', range: 'A1:C101' },
      { type: 'sheet', sheet: 'People', range: 'A102:C201' },
      { type: 'sheet', sheet: 'People', range: 'A202:C251' },
    ]);
    expect(parts[1]!.rows!.slice(0, 3)).toEqual([1, 102, 103]);
    expect(parts[1]!.text.split('\n')[1]).toBe('| 101 | person 101 | Porto |');
  });

  test("Excel's _xHHHH_ escapes and line breaks inside a cell read as single spaces", async () => {
    const book = makeXlsx([
      { name: 'Notes', rows: [['Note'], ['line one_x000D_\nline two'], [{ inline: 'a_x0009_b' }]] },
    ]);
    const [part] = await xlsxReader.read(book, limits);
    expect(part!.text).toBe('| Note |\n| line one line two |\n| a b |');
  });

  test('the header is the first non-empty row; empty rows and columns are left out', async () => {
    const rawSheetData =
      '<row r="3"><c r="C3" t="inlineStr"><is><t>Code</t></is></c><c r="E3" t="inlineStr"><is><t>Label</t></is></c></row>' +
      '<row r="4"><c r="D4"/></row>' +
      '<row r="7"><c r="C7"><v>7</v></c><c r="E7" t="inlineStr"><is><t>seven</t></is></c></row>';
    const [part] = await xlsxReader.read(makeXlsx([{ name: 'Sparse', rawSheetData }]), limits);
    expect(part!.text).toBe('| Code | Label |\n| 7 | seven |');
    expect(part!.rows).toEqual([3, 7]);
    expect(part!.location).toEqual({ type: 'sheet', sheet: 'Sparse', range: 'C3:E7' });
    expect(part!.columns).toEqual(['C', 'E']);
  });

  test('a sheet that declares a million cells but holds few reads as what it holds', async () => {
    const book = makeXlsx([
      {
        name: 'Big claim',
        dimension: 'A1:XFD1048576',
        rows: [
          ['a', 'b'],
          ['1', '2'],
        ],
      },
    ]);
    const parts = await xlsxReader.read(book, { ...limits, maxCells: 1000 });
    expect(parts).toHaveLength(1);
    expect(parts[0]!.text).toBe('| a | b |\n| 1 | 2 |');
  });

  test('an external workbook link is not followed (its target is not text, the link part is not read)', async () => {
    const book = makeXlsx([{ name: 'Linked', rows: [['x'], [{ formula: '[1]Sheet1!A1', cached: 5 }]] }], {
      externalLink: 'file:///etc/passwd',
    });
    const parts = await xlsxReader.read(book, limits);
    expect(parts[0]!.text).toBe('| x |\n| 5 |');
  });

  test('a real workbook (readxl 1.4.2 deaths.xlsx): formulas as cached values, dates as dates', async () => {
    const parts = await xlsxReader.read(fixture('readxl-deaths.xlsx'), limits);
    expect(parts.map((part) => part.location)).toEqual([
      { type: 'sheet', sheet: 'arts', range: 'A1:F19' },
      { type: 'sheet', sheet: 'other', range: 'A1:F19' },
    ]);
    const lines = parts[0]!.text.split('\n');
    // C6 is =DATEDIF(E6,F6,"y") with 69 cached; E6/F6 are date-formatted serials.
    expect(lines[parts[0]!.rows!.indexOf(6)]).toBe('| David Bowie | musician | 69 | TRUE | 1947-01-08 | 2016-01-10 |');
    expect(parts[0]!.text).not.toContain('DATEDIF');
  });
});

describe('docx', () => {
  test('headings give section paths; a part starts at each heading of level 1 or 2', async () => {
    const doc = makeDocx([
      { paragraph: 'Before any heading.' },
      { title: 'Annual report' },
      { paragraph: 'Summary text.' },
      { heading: 'Finance', level: 1 },
      { paragraph: 'Money matters.' },
      { heading: 'Revenue', level: 2 },
      { paragraph: 'Revenue grew.' },
      { heading: 'By region', level: 3 },
      { paragraph: 'North led.' },
      { heading: 'Costs', level: 2 },
      { paragraph: 'Costs fell.' },
      { heading: 'People', level: 1 },
      { paragraph: 'We hired.' },
    ]);
    const parts = await docxReader.read(doc, limits);
    expect(parts.map((part) => [part.location, part.text])).toEqual([
      [{ type: 'section', path: [] }, 'Before any heading.'],
      [{ type: 'section', path: ['Annual report'] }, 'Annual report Summary text.'],
      [{ type: 'section', path: ['Finance'] }, 'Finance Money matters.'],
      [{ type: 'section', path: ['Finance', 'Revenue'] }, 'Revenue Revenue grew. By region North led.'],
      [{ type: 'section', path: ['Finance', 'Costs'] }, 'Costs Costs fell.'],
      [{ type: 'section', path: ['People'] }, 'People We hired.'],
    ]);
    expect(parts[3]!.blocks.map((block) => (block.kind === 'heading' ? block.size : block.kind))).toEqual([
      5,
      'text',
      4,
      'text',
    ]);
  });

  test('footnotes and endnotes read after the body, each kind under its own heading; the separators hold no text', async () => {
    const doc = makeDocx([{ heading: 'Method', level: 1 }, { paragraph: 'Samples were taken at dawn.' }], {
      footnotes: ['Dawn means the hour before sunrise.', 'Two samples were lost.'],
      endnotes: ['Data are kept by the harbour office.'],
    });
    const parts = await docxReader.read(doc, limits);
    expect(parts.map((part) => [part.location, part.text])).toEqual([
      [{ type: 'section', path: ['Method'] }, 'Method Samples were taken at dawn.'],
      [
        { type: 'section', path: ['Footnotes'] },
        'Footnotes Dawn means the hour before sunrise. Two samples were lost.',
      ],
      [{ type: 'section', path: ['Endnotes'] }, 'Endnotes Data are kept by the harbour office.'],
    ]);
    // Notes count against the document's text budget with its body.
    const tight = { ...limits, maxTextChars: 'Method Samples were taken at dawn.'.length + 10 };
    await expect(docxReader.read(doc, tight)).rejects.toMatchObject({ reason: 'TOO_COMPLEX' });
  });

  test('notes of whitespace only, and blank paragraphs, make no part and no notes heading', async () => {
    const doc = makeDocx([{ paragraph: 'Samples were taken at dawn.' }, { paragraph: '  \u00a0 ' }], {
      footnotes: ['   '],
    });
    const parts = await docxReader.read(doc, limits);
    expect(parts.map((part) => part.text)).toEqual(['Samples were taken at dawn.']);
  });

  test('localised heading styles are known by their name in styles.xml, and an outline level makes a heading', async () => {
    const styles =
      '<w:style w:type="paragraph" w:styleId="Titre1"><w:name w:val="heading 1"/></w:style>' +
      '<w:style w:type="paragraph" w:styleId="MonTitre"><w:name w:val="Mon titre"/><w:basedOn w:val="Titre1"/></w:style>';
    const outline = '<w:p><w:pPr><w:outlineLvl w:val="1"/></w:pPr><w:r><w:t>Outlined</w:t></w:r></w:p>';
    const doc = makeDocx(
      [
        { paragraph: 'Chapitre', style: 'Titre1' },
        { paragraph: 'Texte.' },
        { paragraph: 'Dérivé', style: 'MonTitre' },
        { raw: outline },
        { paragraph: 'Under it.' },
      ],
      { styles },
    );
    const parts = await docxReader.read(doc, limits);
    expect(parts.map((part) => part.location)).toEqual([
      { type: 'section', path: ['Chapitre'] },
      { type: 'section', path: ['Dérivé'] },
      { type: 'section', path: ['Dérivé', 'Outlined'] },
    ]);
  });

  test('a table reads with its first row as header; merged and empty cells are blank', async () => {
    const cell = (text: string, props = '') =>
      `<w:tc>${props ? `<w:tcPr>${props}</w:tcPr>` : ''}<w:p><w:r><w:t>${text}</w:t></w:r></w:p></w:tc>`;
    const table =
      '<w:tbl>' +
      `<w:tr>${cell('Name')}${cell('Role', '<w:gridSpan w:val="2"/>')}</w:tr>` +
      `<w:tr>${cell('Ada', '<w:vMerge w:val="restart"/>')}${cell('Math')}${cell('')}</w:tr>` +
      `<w:tr>${cell('', '<w:vMerge/>')}${cell('Code')}${cell('Lead')}</w:tr>` +
      '</w:tbl>';
    const parts = await docxReader.read(
      makeDocx([{ paragraph: 'Team:' }, { raw: table }, { paragraph: 'After.' }]),
      limits,
    );
    expect(parts[0]!.text).toBe('Team:\n| Name | Role | |\n| Ada | Math | |\n| | Code | Lead |\nAfter.');
    expect(parts[0]!.blocks.map((block) => block.kind)).toEqual(['text', 'table', 'text']);
  });

  test('a long section splits at paragraph boundaries, every part keeping its heading path', async () => {
    const sentence = 'This sentence fills the section with enough words to pass the limit. ';
    const paragraphs = Array.from({ length: 60 }, (_, k) => ({ paragraph: `${k}: ${sentence.repeat(4)}` }));
    const parts = await docxReader.read(makeDocx([{ heading: 'Long', level: 1 }, ...paragraphs]), limits);
    expect(parts.length).toBeGreaterThan(1);
    for (const part of parts) {
      expect(part.location).toEqual({ type: 'section', path: ['Long'] });
      expect(part.text.length).toBeLessThanOrEqual(8300);
    }
    expect(parts.map((part) => part.text).join(' ')).toContain('59: This sentence');
  });

  test('a split table repeats its header in every part', () => {
    const rows = [['Key', 'Value'], ...Array.from({ length: 400 }, (_, k) => [`k${k}`, 'v'.repeat(40)])];
    const parts = sectionParts([{ kind: 'table', rows }]);
    expect(parts.length).toBeGreaterThan(2);
    for (const part of parts) expect(part.text.startsWith('| Key | Value |\n')).toBe(true);
  });

  test('a text box reads once (its compatibility copy is skipped); deletions and field codes are not text', async () => {
    const textBox = (text: string) => `<w:txbxContent><w:p><w:r><w:t>${text}</w:t></w:r></w:p></w:txbxContent>`;
    const raw =
      '<w:p><w:r><w:t>Lead</w:t></w:r><w:r><mc:AlternateContent xmlns:mc="http://schemas.openxmlformats.org/markup-compatibility/2006">' +
      `<mc:Choice Requires="wps"><w:drawing>${textBox('Boxed words')}</w:drawing></mc:Choice>` +
      `<mc:Fallback><w:pict>${textBox('Boxed words')}</w:pict></mc:Fallback></mc:AlternateContent></w:r>` +
      '<w:del><w:r><w:delText>removed</w:delText></w:r></w:del>' +
      '<w:r><w:instrText> HYPERLINK "http://127.0.0.1:9/x" </w:instrText></w:r>' +
      '<w:hyperlink r:id="rId9"><w:r><w:t>the link text</w:t></w:r></w:hyperlink></w:p>';
    const [part] = await docxReader.read(makeDocx([{ raw }]), limits);
    expect(part!.text).toBe('Lead Boxed words the link text');
  });

  test('a real document (officer 0.6.0 example.docx, French style ids) reads its sections and table', async () => {
    const parts = await docxReader.read(fixture('officer-example.docx'), limits);
    expect(parts[0]!.location).toEqual({ type: 'section', path: ['Title 1'] });
    expect(parts[0]!.text).toContain('Lorem ipsum dolor sit amet');
    const tablePart = parts[partWith(parts, '| Petals | Internode | Sepal | Bract |')]!;
    expect(tablePart.location).toEqual({ type: 'section', path: ['Title 2', 'Sub title 2'] });
    // Its footnotes and endnotes parts hold Word's separators only: no notes heading.
    expect(parts.flatMap((part) => (part.location.type === 'section' ? part.location.path : []))).not.toContain(
      'Footnotes',
    );
  });

  test('a real document (mammoth 1.13.0 tables.docx) reads its table between its paragraphs', async () => {
    const parts = await docxReader.read(fixture('mammoth-tables.docx'), limits);
    expect(parts).toEqual([
      expect.objectContaining({
        text: 'Above\n| Top left | Top right |\n| Bottom left | Bottom right |\nBelow',
        location: { type: 'section', path: [] },
      }),
    ]);
  });
});

describe('detection', () => {
  test('the main part content type names the format; macro-enabled forms read like plain ones', async () => {
    expect(detectOoxml(makeDocx([{ paragraph: 'x' }]))).toBe('docx');
    expect(detectOoxml(makePptx([{ title: 'x' }]))).toBe('pptx');
    expect(detectOoxml(makeXlsx([{ name: 'x', rows: [['x']] }]))).toBe('xlsx');
    expect(detectOoxml(fixture('readxl-deaths.xlsx'))).toBe('xlsx');
    const docm = zipParts({
      '[Content_Types].xml':
        '<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"><Override PartName="/word/document.xml" ContentType="application/vnd.ms-word.document.macroEnabled.main+xml"/></Types>',
      'word/document.xml': `<w:document xmlns:w="w"><w:body>${docxBody([{ paragraph: 'Macro host' }])}</w:body></w:document>`,
      'word/vbaProject.bin': new Uint8Array([1, 2, 3]),
    });
    expect(detectOoxml(docm)).toBe('docx');
    expect((await docxReader.read(docm, limits))[0]!.text).toBe('Macro host');
  });

  test('a binary workbook (.xlsb) is refused with what to do', async () => {
    const xlsb = zipParts({
      '[Content_Types].xml':
        '<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"><Override PartName="/xl/workbook.bin" ContentType="application/vnd.ms-excel.sheet.binary.macroEnabled.main"/></Types>',
      'xl/workbook.bin': new Uint8Array([0, 1, 2]),
    });
    expect(() => detectOoxml(xlsb)).toThrow('binary Excel workbook (.xlsb); save it as .xlsx');
    expect((await refusal(xlsxReader.read(xlsb, limits))).reason).toBe('UNSUPPORTED_TYPE');
  });

  test('bytes that are no OOXML package are not detected', () => {
    expect(detectOoxml(new TextEncoder().encode('%PDF-1.7\n'))).toBeUndefined();
    expect(detectOoxml(zipParts({ 'readme.txt': 'hello' }))).toBeUndefined();
    expect(detectCfb(makeDocx([{ paragraph: 'x' }]))).toBeUndefined();
  });

  test('a reader given another Office format says what the file is', async () => {
    const error = await refusal(docxReader.read(makeXlsx([{ name: 's', rows: [['x']] }]), limits));
    expect(error.reason).toBe('UNSUPPORTED_TYPE');
    expect(error.message).toContain('Excel workbook (.xlsx)');
  });

  test.each([
    [['WordDocument', '1Table'], 'legacy Word document (.doc); save it as .docx and upload it again'],
    [['Workbook'], 'legacy Excel workbook (.xls); save it as .xlsx and upload it again'],
    [['PowerPoint Document', 'Current User'], 'legacy PowerPoint presentation (.ppt); save it as .pptx'],
    [['EncryptionInfo', 'EncryptedPackage'], 'encrypted) Office document; remove the password and upload it again'],
  ])('an OLE compound file holding %j is refused with what to do', async (streams, message) => {
    const cfb = makeCfb(streams);
    const detected = detectCfb(cfb);
    expect(detected?.reason).toBe('UNSUPPORTED_TYPE');
    expect(detected?.message).toContain(message);
    const error = await refusal(pptxReader.read(cfb, limits));
    expect([error.reason, error.message]).toEqual(['UNSUPPORTED_TYPE', detected?.message]);
  });
});
