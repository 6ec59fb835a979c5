// Builds small Office Open XML packages (docx, pptx, xlsx) from a spec, with fflate's zipSync, so
// a test knows exactly what a document holds: "slide 4's notes say X", a hidden sheet, a table.
// The parts are the minimum Word, PowerPoint and Excel open; the readers need no more.

import { zipSync } from 'fflate';

const XML = '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n';
const REL = 'http://schemas.openxmlformats.org/officeDocument/2006/relationships';
const PKG_REL = 'http://schemas.openxmlformats.org/package/2006/relationships';
const W = 'http://schemas.openxmlformats.org/wordprocessingml/2006/main';
const A = 'http://schemas.openxmlformats.org/drawingml/2006/main';
const P = 'http://schemas.openxmlformats.org/presentationml/2006/main';
const S = 'http://schemas.openxmlformats.org/spreadsheetml/2006/main';

export const escapeXml = (text: string) =>
  text.replaceAll('&', '&amp;').replaceAll('<', '&lt;').replaceAll('>', '&gt;').replaceAll('"', '&quot;');

/** A zip of these parts (strings as UTF-8), deflated. */
export function zipParts(parts: Record<string, string | Uint8Array>): Uint8Array {
  const files: Record<string, Uint8Array> = {};
  for (const [name, body] of Object.entries(parts)) {
    files[name] = typeof body === 'string' ? new TextEncoder().encode(body) : body;
  }
  return zipSync(files, { level: 6 });
}

function contentTypes(overrides: Record<string, string>): string {
  return `${XML}<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"><Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/><Default Extension="xml" ContentType="application/xml"/>${Object.entries(
    overrides,
  )
    .map(([name, type]) => `<Override PartName="/${name}" ContentType="${type}"/>`)
    .join('')}</Types>`;
}

function rels(list: { id: string; type: string; target: string; external?: boolean }[]): string {
  return `${XML}<Relationships xmlns="${PKG_REL}">${list
    .map(
      (rel) =>
        `<Relationship Id="${rel.id}" Type="${REL}/${rel.type}" Target="${escapeXml(rel.target)}"${rel.external ? ' TargetMode="External"' : ''}/>`,
    )
    .join('')}</Relationships>`;
}

const packageRels = (main: string) => rels([{ id: 'rId1', type: 'officeDocument', target: main }]);

// ---- Word ----

export type DocxBlock =
  | { heading: string; level: number }
  | { title: string }
  | { paragraph: string; style?: string }
  | { table: string[][] }
  /** Raw WordprocessingML inside <w:body>. */
  | { raw: string };

const run = (text: string) => `<w:r><w:t xml:space="preserve">${escapeXml(text)}</w:t></w:r>`;
const para = (text: string, style?: string) =>
  `<w:p>${style ? `<w:pPr><w:pStyle w:val="${style}"/></w:pPr>` : ''}${run(text)}</w:p>`;

export function docxBody(blocks: DocxBlock[]): string {
  return blocks
    .map((block) => {
      if ('heading' in block) return para(block.heading, `Heading${block.level}`);
      if ('title' in block) return para(block.title, 'Title');
      if ('paragraph' in block) return para(block.paragraph, block.style);
      if ('raw' in block) return block.raw;
      const rows = block.table.map((row) => `<w:tr>${row.map((cell) => `<w:tc>${para(cell)}</w:tc>`).join('')}</w:tr>`);
      return `<w:tbl>${rows.join('')}</w:tbl>`;
    })
    .join('');
}

/** A .docx of these blocks; `styles` is a raw <w:styles> body (default: none). */
export function makeDocx(
  blocks: DocxBlock[],
  options: {
    styles?: string;
    extraParts?: Record<string, string>;
    /** Each note one paragraph, after Word's two separator notes (ids -1 and 0). */
    footnotes?: string[];
    endnotes?: string[];
  } = {},
) {
  const documentRels = options.styles ? [{ id: 'rId1', type: 'styles', target: 'styles.xml' }] : [];
  const overrides: Record<string, string> = {
    'word/document.xml': 'application/vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml',
  };
  const notes: Record<string, string> = {};
  for (const kind of ['footnote', 'endnote'] as const) {
    const texts = options[`${kind}s`];
    if (!texts) continue;
    const separators = `<w:${kind} w:type="separator" w:id="-1"><w:p><w:r><w:separator/></w:r></w:p></w:${kind}><w:${kind} w:type="continuationSeparator" w:id="0"><w:p><w:r><w:continuationSeparator/></w:r></w:p></w:${kind}>`;
    notes[`word/${kind}s.xml`] =
      `${XML}<w:${kind}s xmlns:w="${W}">${separators}${texts.map((text, k) => `<w:${kind} w:id="${k + 1}"><w:p><w:pPr><w:pStyle w:val="${kind === 'footnote' ? 'FootnoteText' : 'EndnoteText'}"/></w:pPr><w:r><w:t xml:space="preserve">${escapeXml(text)}</w:t></w:r></w:p></w:${kind}>`).join('')}</w:${kind}s>`;
    overrides[`word/${kind}s.xml`] = `application/vnd.openxmlformats-officedocument.wordprocessingml.${kind}s+xml`;
    documentRels.push({ id: `rId${kind}`, type: `${kind}s`, target: `${kind}s.xml` });
  }
  return zipParts({
    '[Content_Types].xml': contentTypes(overrides),
    '_rels/.rels': packageRels('word/document.xml'),
    'word/document.xml': `${XML}<w:document xmlns:w="${W}" xmlns:r="${REL}"><w:body>${docxBody(blocks)}<w:sectPr/></w:body></w:document>`,
    'word/_rels/document.xml.rels': rels(documentRels),
    ...(options.styles ? { 'word/styles.xml': `${XML}<w:styles xmlns:w="${W}">${options.styles}</w:styles>` } : {}),
    ...notes,
    ...options.extraParts,
  });
}

// ---- PowerPoint ----

export interface SlideSpec {
  title?: string;
  body?: string[];
  table?: string[][];
  notes?: string[];
  hidden?: boolean;
}

const textBody = (paragraphs: string[]) =>
  `<p:txBody><a:bodyPr/>${paragraphs.map((text) => `<a:p><a:r><a:t>${escapeXml(text)}</a:t></a:r></a:p>`).join('')}</p:txBody>`;
const shape = (placeholder: string | undefined, paragraphs: string[], id: number) =>
  `<p:sp><p:nvSpPr><p:cNvPr id="${id}" name="Shape ${id}"/><p:cNvSpPr/><p:nvPr>${placeholder ? `<p:ph type="${placeholder}"/>` : ''}</p:nvPr></p:nvSpPr><p:spPr/>${textBody(paragraphs)}</p:sp>`;
const slideTable = (rows: string[][]) =>
  `<p:graphicFrame><p:nvGraphicFramePr><p:cNvPr id="9" name="Table"/><p:cNvGraphicFramePr/><p:nvPr/></p:nvGraphicFramePr><p:xfrm/><a:graphic><a:graphicData uri="http://schemas.openxmlformats.org/drawingml/2006/table"><a:tbl>${rows
    .map(
      (row) =>
        `<a:tr h="0">${row.map((cell) => `<a:tc><a:txBody><a:bodyPr/><a:p><a:r><a:t>${escapeXml(cell)}</a:t></a:r></a:p></a:txBody></a:tc>`).join('')}</a:tr>`,
    )
    .join('')}</a:tbl></a:graphicData></a:graphic></p:graphicFrame>`;

/** A .pptx of these slides (slide n is ppt/slides/slide<n>.xml; the list order is the deck's). */
export function makePptx(slides: SlideSpec[], options: { order?: number[] } = {}): Uint8Array {
  const order = options.order ?? slides.map((_, k) => k);
  const parts: Record<string, string> = {};
  const overrides: Record<string, string> = {
    'ppt/presentation.xml': 'application/vnd.openxmlformats-officedocument.presentationml.presentation.main+xml',
  };
  slides.forEach((slide, k) => {
    const n = k + 1;
    const tree = [
      slide.title !== undefined ? shape('title', [slide.title], 2) : '',
      slide.body ? shape('body', slide.body, 3) : '',
      slide.table ? slideTable(slide.table) : '',
    ].join('');
    parts[`ppt/slides/slide${n}.xml`] =
      `${XML}<p:sld xmlns:a="${A}" xmlns:r="${REL}" xmlns:p="${P}"${slide.hidden ? ' show="0"' : ''}><p:cSld><p:spTree><p:nvGrpSpPr><p:cNvPr id="1" name=""/><p:cNvGrpSpPr/><p:nvPr/></p:nvGrpSpPr><p:grpSpPr/>${tree}</p:spTree></p:cSld></p:sld>`;
    overrides[`ppt/slides/slide${n}.xml`] = 'application/vnd.openxmlformats-officedocument.presentationml.slide+xml';
    const slideRels = [];
    if (slide.notes) {
      slideRels.push({ id: 'rId2', type: 'notesSlide', target: `../notesSlides/notesSlide${n}.xml` });
      parts[`ppt/notesSlides/notesSlide${n}.xml`] =
        `${XML}<p:notes xmlns:a="${A}" xmlns:r="${REL}" xmlns:p="${P}"><p:cSld><p:spTree><p:nvGrpSpPr><p:cNvPr id="1" name=""/><p:cNvGrpSpPr/><p:nvPr/></p:nvGrpSpPr><p:grpSpPr/>${shape('sldImg', [], 2)}${shape('body', slide.notes, 3)}${shape('sldNum', [String(n)], 4)}</p:spTree></p:cSld></p:notes>`;
      overrides[`ppt/notesSlides/notesSlide${n}.xml`] =
        'application/vnd.openxmlformats-officedocument.presentationml.notesSlide+xml';
    }
    parts[`ppt/slides/_rels/slide${n}.xml.rels`] = rels(slideRels);
  });
  const ids = order.map((k, position) => `<p:sldId id="${256 + position}" r:id="rId${k + 10}"/>`).join('');
  parts['ppt/presentation.xml'] =
    `${XML}<p:presentation xmlns:a="${A}" xmlns:r="${REL}" xmlns:p="${P}"><p:sldIdLst>${ids}</p:sldIdLst></p:presentation>`;
  parts['ppt/_rels/presentation.xml.rels'] = rels(
    slides.map((_, k) => ({ id: `rId${k + 10}`, type: 'slide', target: `slides/slide${k + 1}.xml` })),
  );
  return zipParts({
    '[Content_Types].xml': contentTypes(overrides),
    '_rels/.rels': packageRels('ppt/presentation.xml'),
    ...parts,
  });
}

// ---- Excel ----

export type CellSpec =
  | string
  | number
  | boolean
  | null
  | { formula: string; cached?: string | number }
  | { error: string }
  | { inline: string }
  /** A serial number in a cell styled with a built-in date format (numFmtId 14). */
  | { dateSerial: number };

export interface SheetSpec {
  name: string;
  state?: 'hidden' | 'veryHidden';
  rows?: CellSpec[][];
  /** Raw <sheetData> content instead of rows. */
  rawSheetData?: string;
  /** The whole worksheet part, as given. */
  rawXml?: string;
  dimension?: string;
}

const letters = (column: number): string =>
  column <= 0 ? '' : letters(Math.floor((column - 1) / 26)) + String.fromCharCode(65 + ((column - 1) % 26));

/** A .xlsx of these sheets (strings shared, rows from 1, columns from A). */
export function makeXlsx(
  sheets: SheetSpec[],
  options: {
    externalLink?: string;
    /** workbookPr date1904: serials count from 1904-01-01. */
    date1904?: boolean;
  } = {},
): Uint8Array {
  const shared: string[] = [];
  const sharedIndex = (text: string) => {
    const at = shared.indexOf(text);
    return at >= 0 ? at : shared.push(text) - 1;
  };
  const cellXml = (cell: CellSpec, ref: string): string => {
    if (cell === null) return '';
    if (typeof cell === 'string') return `<c r="${ref}" t="s"><v>${sharedIndex(cell)}</v></c>`;
    if (typeof cell === 'number') return `<c r="${ref}"><v>${cell}</v></c>`;
    if (typeof cell === 'boolean') return `<c r="${ref}" t="b"><v>${cell ? 1 : 0}</v></c>`;
    if ('error' in cell) return `<c r="${ref}" t="e"><v>${escapeXml(cell.error)}</v></c>`;
    if ('inline' in cell) return `<c r="${ref}" t="inlineStr"><is><t>${escapeXml(cell.inline)}</t></is></c>`;
    if ('dateSerial' in cell) return `<c r="${ref}" s="1"><v>${cell.dateSerial}</v></c>`;
    const type = typeof cell.cached === 'string' ? ' t="str"' : '';
    const cached = cell.cached === undefined ? '' : `<v>${escapeXml(String(cell.cached))}</v>`;
    return `<c r="${ref}"${type}><f>${escapeXml(cell.formula)}</f>${cached}</c>`;
  };
  const parts: Record<string, string> = {};
  const overrides: Record<string, string> = {
    'xl/workbook.xml': 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet.main+xml',
  };
  sheets.forEach((sheet, k) => {
    const data =
      sheet.rawSheetData ??
      (sheet.rows ?? [])
        .map(
          (row, r) =>
            `<row r="${r + 1}">${row.map((cell, c) => cellXml(cell, `${letters(c + 1)}${r + 1}`)).join('')}</row>`,
        )
        .join('');
    parts[`xl/worksheets/sheet${k + 1}.xml`] =
      sheet.rawXml ??
      `${XML}<worksheet xmlns="${S}" xmlns:r="${REL}">${sheet.dimension ? `<dimension ref="${sheet.dimension}"/>` : ''}<sheetData>${data}</sheetData></worksheet>`;
    overrides[`xl/worksheets/sheet${k + 1}.xml`] =
      'application/vnd.openxmlformats-officedocument.spreadsheetml.worksheet+xml';
  });
  const workbookRels = sheets.map((_, k) => ({
    id: `rId${k + 1}`,
    type: 'worksheet',
    target: `worksheets/sheet${k + 1}.xml`,
  }));
  workbookRels.push({ id: 'rIdS', type: 'sharedStrings', target: 'sharedStrings.xml' });
  // Styles: 0 the default, 1 a built-in date format (what a { dateSerial } cell uses).
  workbookRels.push({ id: 'rIdT', type: 'styles', target: 'styles.xml' });
  parts['xl/styles.xml'] =
    `${XML}<styleSheet xmlns="${S}"><cellXfs count="2"><xf numFmtId="0"/><xf numFmtId="14" applyNumberFormat="1"/></cellXfs></styleSheet>`;
  overrides['xl/styles.xml'] = 'application/vnd.openxmlformats-officedocument.spreadsheetml.styles+xml';
  if (options.externalLink) {
    workbookRels.push({ id: 'rIdX', type: 'externalLink', target: 'externalLinks/externalLink1.xml' });
    parts['xl/externalLinks/externalLink1.xml'] =
      `${XML}<externalLink xmlns="${S}" xmlns:r="${REL}"><externalBook r:id="rId1"/></externalLink>`;
    parts['xl/externalLinks/_rels/externalLink1.xml.rels'] = rels([
      { id: 'rId1', type: 'externalLinkPath', target: options.externalLink, external: true },
    ]);
  }
  const workbookPr = options.date1904 ? '<workbookPr date1904="1"/>' : '';
  parts['xl/workbook.xml'] = `${XML}<workbook xmlns="${S}" xmlns:r="${REL}">${workbookPr}<sheets>${sheets
    .map(
      (sheet, k) =>
        `<sheet name="${escapeXml(sheet.name)}" sheetId="${k + 1}"${sheet.state ? ` state="${sheet.state}"` : ''} r:id="rId${k + 1}"/>`,
    )
    .join('')}</sheets></workbook>`;
  parts['xl/_rels/workbook.xml.rels'] = rels(workbookRels);
  parts['xl/sharedStrings.xml'] =
    `${XML}<sst xmlns="${S}" count="${shared.length}" uniqueCount="${shared.length}">${shared.map((text) => `<si><t xml:space="preserve">${escapeXml(text)}</t></si>`).join('')}</sst>`;
  return zipParts({
    '[Content_Types].xml': contentTypes(overrides),
    '_rels/.rels': packageRels('xl/workbook.xml'),
    ...parts,
  });
}
