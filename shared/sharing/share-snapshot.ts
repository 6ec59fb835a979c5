import type { Message } from '../chats/schemas.ts';
import { citationsOf, isUnfinished, type Citation } from './transcript.ts';

// What a share shows of a message, and nothing else: who spoke (user or assistant), the text,
// the time and the cited passages by file name, page and quote. No ids (user, message, file),
// no emails, no URLs, no system message; file attachments (which name their file id) are left out.

export interface SharedMessage {
  role: 'user' | 'assistant';
  text: string;
  timestamp: string;
  citations?: Citation[];
  /** Set on a reply that did not run to its end. */
  incomplete?: true;
}

/** The branch's messages as a share shows them. */
export function sharedMessages(branch: Message[]): SharedMessage[] {
  return branch.flatMap((m): SharedMessage[] => {
    if (m.type === 'file' || m.messageType === 'system') return [];
    if (m.messageType === 'user') return [{ role: 'user', text: m.message, timestamp: m.timestamp }];
    const citations = citationsOf(m.sources);
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
