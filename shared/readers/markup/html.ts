// HTML → the page's main content as blocks (docs/DECISIONS.md "Markup and text readers"). One
// streaming pass of htmlparser2's tokenizer, which builds no tree and never loads anything a page
// references: the reader keeps its own stack of open elements (refused past `maxDepth`), drops the
// subtrees that are not content (navigation, page header and footer, asides, scripts, styles,
// forms, frames, SVG, hidden elements; comments are never text), and prefers `<main>`, then
// `<article>`, when the page has them. Headings stay headings, tables become rows (the header
// first), everything else reads as prose.

import { Parser } from 'htmlparser2';
import { type DocumentReader, ReadRefused, type ReaderLimits, normaliseText } from '../reader.ts';
import { type SectionBlock, sectionParts } from '../sections.ts';
import { checkTextLength, decodeDocument } from './text.ts';

/** Elements whose whole subtree is not content. */
// biome-ignore format: a word list
const DROPPED = new Set([
  'nav', 'aside', 'script', 'style', 'noscript', 'template', 'form', 'iframe', 'frame', 'frameset',
  'svg', 'math', 'object', 'embed', 'canvas', 'video', 'audio', 'picture', 'map', 'select', 'button',
  'input', 'textarea', 'dialog', 'link', 'meta', 'base',
]);
/** Landmark roles that are not the main content. */
const DROPPED_ROLES = new Set([
  'navigation',
  'banner',
  'contentinfo',
  'complementary',
  'search',
  'menu',
  'menubar',
  'dialog',
]);
/** Outside main/article, a class or id word starting so marks navigation (`nav-panel`, `menu-title`). */
const NAVIGATION_NAME =
  /^(?:nav|navbar|navigation|menu|breadcrumbs?|sidebar|header|footer|skip-link|site-header|site-footer|site-nav)(?:[-_].*)?$/i;
/** Elements a navigation-like class never drops (`<body class="sidebar-visible">`). */
const NEVER_NAVIGATION = new Set(['html', 'body', 'main', 'article']);
const navigationNamed = (name: string, attributes: Record<string, string>) =>
  !NEVER_NAVIGATION.has(name) &&
  `${attributes.class ?? ''} ${attributes.id ?? ''}`.split(/\s+/).some((word) => NAVIGATION_NAME.test(word));
/** Elements that end a run of prose (others, like `<a>` or `<b>`, sit inside one). */
// biome-ignore format: a word list
const BLOCK = new Set([
  'address', 'article', 'blockquote', 'body', 'caption', 'dd', 'details', 'div', 'dl', 'dt',
  'fieldset', 'figcaption', 'figure', 'footer', 'header', 'hgroup', 'hr', 'html', 'li', 'main',
  'ol', 'p', 'pre', 'section', 'summary', 'ul', 'center', 'legend',
]);
/** h1..h6 → 1..6, any other name → 0 (a test on every element, so without a pattern). */
const headingLevel = (name: string) => {
  if (name.length !== 2 || name.charCodeAt(0) !== 0x68) return 0;
  const digit = name.charCodeAt(1) - 0x30;
  return digit >= 1 && digit <= 6 ? digit : 0;
};
const HIDDEN_STYLE = /(?:^|;)\s*(?:display\s*:\s*none|visibility\s*:\s*hidden)/i;

type Scope = 'main' | 'article' | 'page';
interface Open {
  name: string;
  dropped: boolean;
  scope: Scope | undefined; // set on main and article elements
  section: boolean;
}
interface TableState {
  rows: { cells: string[]; head: boolean }[];
  row: string[] | undefined;
  cell: string | undefined;
  head: boolean;
  caption: string;
  depth: number; // tables nested in this one read as the text of its cell
}

/** What an HTML page or fragment holds: its title and its content's blocks. */
export interface HtmlContent {
  title: string;
  blocks: SectionBlock[];
}

/** The page's title and main content; ReadRefused TOO_COMPLEX past `maxDepth` or `maxTextChars`. */
export function readHtml(html: string, limits: ReaderLimits): HtmlContent {
  checkTextLength(html.length, limits);
  const stack: Open[] = [];
  const found: { block: SectionBlock; scope: Scope }[] = [];
  let dropping = 0;
  let mains = 0;
  let articles = 0;
  let sections = 0;
  let heads = 0;
  let title: string | undefined;
  let inTitle = false;
  let heading: { level: number; text: string } | undefined;
  let table: TableState | undefined;
  let prose = '';

  const scope = (): Scope => (mains > 0 ? 'main' : articles > 0 ? 'article' : 'page');
  const emit = (block: SectionBlock) => found.push({ block, scope: scope() });
  const flush = () => {
    if (prose.trim()) emit({ kind: 'prose', text: prose });
    prose = '';
  };
  const append = (text: string) => {
    if (table?.cell !== undefined) table.cell += text;
    else if (table) table.caption += text;
    else if (heading) heading.text += text;
    else prose += text;
  };
  const endCell = () => {
    if (table?.cell === undefined) return;
    table.row ??= [];
    table.row.push(table.cell);
    table.cell = undefined;
  };
  const endRow = () => {
    endCell();
    if (table?.row) table.rows.push({ cells: table.row, head: table.head });
    if (table) table.row = undefined;
  };

  const parser = new Parser(
    {
      onopentag(name, attributes) {
        if (stack.length >= limits.maxDepth)
          throw new ReadRefused('TOO_COMPLEX', `The page nests elements more than ${limits.maxDepth} deep.`);
        const open: Open = { name, dropped: false, scope: undefined, section: false };
        stack.push(open);
        if (dropping > 0) return;
        const role = attributes.role?.toLowerCase();
        const inContent = mains + articles + sections > 0;
        if (
          DROPPED.has(name) ||
          ((name === 'header' || name === 'footer') && !inContent) ||
          (role !== undefined && DROPPED_ROLES.has(role)) ||
          'hidden' in attributes ||
          attributes['aria-hidden'] === 'true' ||
          (attributes.style !== undefined && HIDDEN_STYLE.test(attributes.style)) ||
          (mains + articles === 0 && navigationNamed(name, attributes))
        ) {
          open.dropped = true;
          dropping++;
          if (BLOCK.has(name) || DROPPED.has(name)) flush();
          return;
        }
        if (name === 'head') heads++;
        if (name === 'title' && title === undefined) inTitle = true;
        if (name === 'main' || role === 'main') {
          flush();
          open.scope = 'main';
          mains++;
        } else if (name === 'article') {
          flush();
          open.scope = 'article';
          articles++;
        } else if (name === 'section') {
          open.section = true;
          sections++;
        }
        const level = headingLevel(name);
        if (table) {
          if (name === 'table') table.depth++;
          else if (table.depth === 0 && name === 'tr') endRow();
          else if (table.depth === 0 && (name === 'td' || name === 'th')) {
            endCell();
            table.cell = '';
          } else if (table.depth === 0 && name === 'thead') table.head = true;
          append(' ');
        } else if (name === 'table') {
          flush();
          if (heading) emit({ kind: 'heading', text: heading.text, level: heading.level }); // a table inside a heading ends it
          heading = undefined;
          table = { rows: [], row: undefined, cell: undefined, head: false, caption: '', depth: 0 };
        } else if (level && !heading) {
          flush();
          heading = { level, text: '' };
        } else if (name === 'br' || name === 'img' || name === 'wbr') append(' ');
        else if (BLOCK.has(name) && !heading) flush();
        else if (BLOCK.has(name)) append(' ');
      },
      ontext(text) {
        if (dropping > 0) return;
        if (inTitle) title = (title ?? '') + text;
        else if (heads === 0) append(text); // the head holds no content but its title
      },
      onclosetag(name) {
        const open = stack.pop();
        if (!open) return;
        if (open.dropped) {
          dropping--;
          return;
        }
        if (dropping > 0) return;
        if (name === 'head') heads--;
        if (name === 'title' && inTitle) {
          inTitle = false;
          title ??= '';
        }
        if (table) {
          if (name === 'table' && table.depth > 0) table.depth--;
          else if (name === 'table') {
            endRow();
            if (table.caption.trim()) emit({ kind: 'prose', text: table.caption });
            // The header leads: rows of <thead> first, else the first row.
            const rows = [...table.rows.filter((r) => r.head), ...table.rows.filter((r) => !r.head)];
            emit({ kind: 'table', rows: rows.map((r) => r.cells) });
            table = undefined;
          } else if (table.depth === 0 && (name === 'td' || name === 'th')) endCell();
          else if (table.depth === 0 && name === 'tr') endRow();
          else if (table.depth === 0 && name === 'thead') table.head = false;
          else append(' ');
        } else if (heading && headingLevel(name)) {
          emit({ kind: 'heading', text: heading.text, level: heading.level });
          heading = undefined;
        } else if (BLOCK.has(name) && !heading) flush();
        if (open.scope === 'main') mains--;
        if (open.scope === 'article') articles--;
        if (open.section) sections--;
      },
    },
    { decodeEntities: true, lowerCaseTags: true, lowerCaseAttributeNames: true, recognizeCDATA: false },
  );
  parser.write(html);
  parser.end();
  if (heading) emit({ kind: 'heading', text: heading.text, level: heading.level });
  flush();

  // The main content when the page marks it: <main> (or role="main"), else its articles.
  const has = (wanted: Scope) => found.some((f) => f.scope === wanted);
  const kept = has('main') ? 'main' : has('article') ? 'article' : undefined;
  const content = found.filter((f) => kept === undefined || f.scope === kept).map((f) => f.block);
  return { title: normaliseText(title ?? ''), blocks: content };
}

/**
 * The page's blocks with its title first, as a level-1 heading, unless the first heading is a
 * level-1 heading the title already contains ("Install — MySite" over "Install").
 */
export function htmlBlocks(html: string, limits: ReaderLimits): SectionBlock[] {
  const { title, blocks } = readHtml(html, limits);
  if (!title) return blocks;
  const first = blocks.find((b) => b.kind === 'heading');
  const firstText = first?.kind === 'heading' && first.level === 1 ? normaliseText(first.text).toLowerCase() : '';
  if (firstText && title.toLowerCase().includes(firstText)) return blocks;
  return [{ kind: 'heading', text: title, level: 1 }, ...blocks];
}

/** A page's parts, from its decoded text. */
export const htmlParts = (html: string, limits: ReaderLimits) => sectionParts(htmlBlocks(html, limits));

export const htmlReader: DocumentReader = {
  format: 'html',
  async read(bytes, limits) {
    return htmlParts(decodeDocument(bytes, limits), limits);
  },
};
