import type { Usage } from '../../ai/types.ts';
import type { ReplyState } from './reply-repository.ts';
import type { SourceRef } from '../schemas.ts';

// The events of a streamed reply, numbered 1, 2, … within the reply. The live stream and a replay
// build them by the same rules from the same state, so a client that joins what it had with a
// replay after its last id gets every event once:
//   1 start · 2 sources (file chats) · one event per delta · then, by how the reply ended:
//   complete: citations (file chats), usage, title (the first exchange of a chat without a name) ·
//   stopped: citations (file chats), usage, stopped · failed: error.

export interface StartData {
  chatId: string;
  userMessageId: string;
  userSequenceNumber: number;
  messageId: string;
}

/**
 * What a streamed reply tells its client, in order: events with JSON data, each named but the
 * deltas, each with its id (Server-Sent Events carry them as they are: `id:`, `event:` and
 * `data:` lines).
 */
export type ReplyEvent = { id: number } & (
  | { event: 'start'; data: StartData }
  | { event: 'sources'; data: SourceRef[] }
  | { event?: undefined; data: { content: string } }
  | { event: 'citations'; data: { cited: number[] } }
  | { event: 'usage'; data: Usage }
  | { event: 'title'; data: { chatName: string } }
  | { event: 'stopped'; data: Record<string, never> }
  | { event: 'error'; data: { message: string } }
);

/** A reply's events as a stream: live (the generation goes on when the client leaves) or replayed. */
export interface ReplyStream {
  open(clientGone: AbortSignal): AsyncGenerator<ReplyEvent>;
}

/** Id of a reply's first delta: after start, and the sources in a file chat. */
export const firstDeltaId = (hasSources: boolean) => (hasSources ? 3 : 2);

/** The events before the first delta. */
export function openingEvents(start: StartData, sources: SourceRef[] | undefined): ReplyEvent[] {
  return [
    { id: 1, event: 'start', data: start },
    ...(sources ? [{ id: 2, event: 'sources' as const, data: sources }] : []),
  ];
}

/** The events after the last delta, once the reply has ended (none while it streams). */
export function closingEvents(state: ReplyState): ReplyEvent[] {
  const { message } = state;
  if (message.status === 'streaming') return [];
  let id = firstDeltaId(!!message.sources) + state.deltaEnds.length;
  if (message.status === 'failed') {
    return [{ id, event: 'error', data: { message: state.failureMessage ?? 'The reply failed' } }];
  }
  const usage = message.usage ?? { promptTokens: 0, completionTokens: 0, totalTokens: 0 };
  return [
    ...(message.sources ? [{ id: id++, event: 'citations' as const, data: { cited: state.cited ?? [] } }] : []),
    { id: id++, event: 'usage', data: usage },
    ...(state.title ? [{ id: id++, event: 'title' as const, data: { chatName: state.title } }] : []),
    ...(message.status === 'stopped' ? [{ id: id++, event: 'stopped' as const, data: {} }] : []),
  ];
}

/** The sources as the live stream sent them (before the reply marked which it cited). */
const asSent = (sources: SourceRef[]) => sources.map(({ cited: _cited, ...source }) => source);

/** Every event of the stored reply after event `after`, as far as it has been stored. */
export function storedEvents(state: ReplyState, after: number): ReplyEvent[] {
  const { message } = state;
  const start: StartData = {
    chatId: message.chatId,
    userMessageId: state.promptId,
    userSequenceNumber: state.promptSequence,
    messageId: message.id,
  };
  const first = firstDeltaId(!!message.sources);
  const deltas: ReplyEvent[] = state.deltaEnds.map((end, i) => ({
    id: first + i,
    data: { content: message.message.slice(i ? state.deltaEnds[i - 1] : 0, end) },
  }));
  const ended = message.status !== 'streaming' && state.finished;
  return [
    ...openingEvents(start, message.sources && asSent(message.sources)),
    ...deltas,
    ...(ended ? closingEvents(state) : []),
  ].filter((e) => e.id > after);
}
