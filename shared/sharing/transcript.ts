import type { Message, SourceRef } from '../chats/schemas.ts';

// What export and share show of a message: who said it, when, its text, and the passages an AI
// reply cites by their [n] markers (`cited` sources; n is the source's position from 1).

export interface Citation {
  /** The reply's marker: [n]. */
  n: number;
  fileName?: string;
  page: number;
  quote: string;
}

/** The passages of an ai reply that its text cites, by marker. */
export function citationsOf(sources: SourceRef[] | undefined): Citation[] {
  return (sources ?? []).flatMap((s, i) =>
    s.cited
      ? [{ n: i + 1, ...(s.fileName !== undefined && { fileName: s.fileName }), page: s.page, quote: s.quote }]
      : [],
  );
}

/** A reply that did not run to its end (stopped, failed, or still being generated). */
export const isUnfinished = (m: Message) =>
  m.incomplete === true || m.status === 'streaming' || m.status === 'stopped' || m.status === 'failed';

/** `2026-11-24 09:30 UTC` for an ISO time. */
export const readableTime = (iso: string) => `${iso.slice(0, 10)} ${iso.slice(11, 16)} UTC`;

/**
 * A file name for the chat: its name without characters file systems or headers refuse
 * (controls, separators, reserved punctuation), spaces collapsed, at most 100 characters.
 */
export function safeFileName(chatName: string, extension: string): string {
  const base = chatName
    .replace(/[\p{C}\\/:*?"<>|]+/gu, ' ')
    .replace(/\s+/g, ' ')
    .trim()
    .replace(/^\.+/, '')
    .slice(0, 100)
    .trim();
  return `${base || 'chat'}.${extension}`;
}
