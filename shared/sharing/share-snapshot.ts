import type { Message } from '../chats/schemas.ts';
import { citationsOf, isUnfinished, type Citation } from './transcript.ts';

// What a share shows of a message, and nothing else: who spoke (user or assistant), the text,
// the time and the cited passages by file name, page and quote. No ids (user, message, file),
// no emails, no URLs, no system message; file attachments (which name their file id) are left out.
// A cited file that is deleted leaves only its marker (docs/DECISIONS.md "Export and share"): the
// snapshot keeps each citation's file id (never shown) so a read can tell.

/** A citation whose file was deleted: its marker, and that it was deleted; no name, page or quote. */
export interface DeletedCitation {
  n: number;
  deleted: true;
}

/** A citation as a share stores it: with its file's id (absent in snapshots made before it was kept). */
export type StoredCitation = (Citation & { fileId?: string }) | DeletedCitation;

interface SnapshotMessage<C> {
  role: 'user' | 'assistant';
  text: string;
  timestamp: string;
  citations?: C[];
  /** Set on a reply that did not run to its end. */
  incomplete?: true;
}

/** A message as a share stores it. */
export type SharedMessage = SnapshotMessage<StoredCitation>;
/** A message as a share shows it. */
export type ShownMessage = SnapshotMessage<Citation | DeletedCitation>;

/** The branch's messages as a share stores them. */
export function sharedMessages(branch: Message[]): SharedMessage[] {
  return branch.flatMap((m): SharedMessage[] => {
    if (m.type === 'file' || m.messageType === 'system') return [];
    if (m.messageType === 'user') return [{ role: 'user', text: m.message, timestamp: m.timestamp }];
    // n is the source's position from 1 (transcript.ts): its file is that source's.
    const citations = citationsOf(m.sources).map((c) => ({ ...c, fileId: m.sources![c.n - 1]!.fileId }));
    if (!m.message && !citations.length) return []; // a reply that failed before its first word
    return [
      {
        role: 'assistant',
        text: m.message,
        timestamp: m.timestamp,
        ...(citations.length && { citations }),
        ...(isUnfinished(m) && { incomplete: true as const }),
      },
    ];
  });
}

const isDeleted = (c: StoredCitation): c is DeletedCitation => 'deleted' in c;

/** The files a snapshot's citations name (each once). */
export function citedFileIds(messages: SharedMessage[]): string[] {
  const ids = messages.flatMap((m) =>
    (m.citations ?? []).flatMap((c) => (!isDeleted(c) && c.fileId ? [c.fileId] : [])),
  );
  return [...new Set(ids)];
}

/** Shorter than this, a name or quote is too likely to be an ordinary word of the reply to remove. */
const MIN_REMOVED_CHARS = 4;

/** `text` with every verbatim copy of `phrase` (any whitespace between its words) replaced. */
function without(text: string, phrase: string, replacement: string): string {
  const words = phrase.trim().split(/\s+/).filter(Boolean);
  if (words.join(' ').length < MIN_REMOVED_CHARS) return text;
  const pattern = words.map((w) => w.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')).join('\\s+');
  return text.replace(new RegExp(pattern, 'g'), replacement);
}

/**
 * The messages with the citations of the `deleted` files reduced to their marker and
 * `deleted: true`; the reply's own text loses any verbatim copy of their quotes and file names
 * (an extractive reply, the offline one, is made of them). A model's paraphrase is its own words
 * and stays.
 */
export function withoutDeletedFiles(messages: SharedMessage[], deleted: ReadonlySet<string>): SharedMessage[] {
  if (!deleted.size) return messages;
  return messages.map((m) => {
    const gone = (m.citations ?? []).filter(
      (c): c is Citation & { fileId: string } => !isDeleted(c) && !!c.fileId && deleted.has(c.fileId),
    );
    if (!gone.length) return m;
    let text = m.text;
    for (const c of gone) text = without(text, c.quote, '[source deleted]');
    for (const c of gone) if (c.fileName) text = without(text, c.fileName, '[deleted file]');
    const goneSet = new Set<StoredCitation>(gone);
    const citations = m.citations!.map((c): StoredCitation => (goneSet.has(c) ? { n: c.n, deleted: true } : c));
    return { ...m, text, citations };
  });
}

/** The messages as a reader sees them: no file ids. */
export function shownMessages(messages: SharedMessage[]): ShownMessage[] {
  return messages.map((m) =>
    m.citations
      ? {
          ...m,
          citations: m.citations.map((c) => {
            if (isDeleted(c)) return { n: c.n, deleted: true as const };
            const { fileId: _file, ...shown } = c;
            return shown;
          }),
        }
      : m,
  );
}
