import { GetCommand } from '@aws-sdk/lib-dynamodb';
import type { Usage } from '../../ai/types.ts';
import { applyIf, Repository, updateExpression, type Item } from '../../dynamo.ts';
import { messageIdKey, messageKey } from '../keys.ts';
import { fromItem, MessageRepository } from '../conversations/message-repository.ts';
import { SearchIndex } from '../search/search-index.ts';
import type { Message, ReplyStatus, SourceRef } from '../schemas.ts';

// A streamed reply is stored as it grows: the message item holds its text so far and, beside
// what the API shows, what a replay needs to send the same events under the same ids: the end of
// each delta in the text, the prompt it answers, the [n] it cited, a failure's message. Writes are
// conditional on the status, so a stop (status stopped) is seen by the generator's next write,
// wherever it runs. `heartbeatAt` says the generator is alive; a reader that finds it too old marks
// the reply failed (`failStale`). A pointer item (MSGID#<id>) finds the reply by its id.

/** What a replay needs of a stored reply. */
export interface ReplyState {
  message: Message & { status: ReplyStatus };
  promptId: string;
  promptSequence: number;
  /** End offset (UTF-16) in the text of each delta event, in order. */
  deltaEnds: number[];
  heartbeatAt: string;
  cited?: number[];
  failureMessage?: string;
  /** The chat's title, when this reply's exchange gave it one. */
  title?: string;
  /** The generator's last write happened: the state no longer changes. */
  finished: boolean;
}

export interface NewReply {
  id: string;
  chatId: string;
  userId: string;
  promptId: string;
  promptSequence: number;
  sources?: SourceRef[];
  now: string;
}

/** What the generator writes at the end. */
export interface FinishedReply {
  text: string;
  deltaEnds: number[];
  status: 'complete' | 'failed';
  usage?: Usage;
  sources?: SourceRef[];
  cited?: number[];
  failureMessage?: string;
  title?: string;
  now: string;
}

function stateOf(item: Item): ReplyState | undefined {
  const message = fromItem(item);
  if (message.messageType !== 'ai' || !message.status || typeof item.promptId !== 'string') return undefined;
  return {
    message: message as ReplyState['message'],
    promptId: item.promptId,
    promptSequence: Number(item.promptSequence),
    deltaEnds: (item.deltaEnds as number[] | undefined) ?? [],
    heartbeatAt: String(item.heartbeatAt ?? message.timestamp),
    ...(Array.isArray(item.cited) && { cited: item.cited as number[] }),
    ...(typeof item.failureMessage === 'string' && { failureMessage: item.failureMessage }),
    ...(typeof item.title === 'string' && { title: item.title }),
    finished: item.finished === true,
  };
}

/** A further condition of an update, with its values. */
interface AlsoWhen {
  condition: string;
  values: Item;
}

/**
 * SET the defined fields (an undefined one is left alone) on condition that the status is
 * `expected` (and, given, something more).
 */
function whileStatus(expected: ReplyStatus, set: Item, also?: AlsoWhen) {
  const defined = Object.fromEntries(Object.entries(set).filter(([, v]) => v !== undefined));
  const u = updateExpression(defined);
  return {
    ...u,
    ConditionExpression: `#status = :expected${also ? ` AND ${also.condition}` : ''}`,
    ExpressionAttributeNames: { ...u.ExpressionAttributeNames, '#status': 'status' },
    ExpressionAttributeValues: { ...u.ExpressionAttributeValues, ':expected': expected, ...also?.values },
  };
}

export class ReplyRepository extends Repository {
  /** An update of the reply at a sequence number while its status is `expected`; false when refused. */
  private updateWhile(chatId: string, sequenceNumber: number, expected: ReplyStatus, set: Item, also?: AlsoWhen) {
    return applyIf(this.db, {
      TableName: this.table,
      Key: messageKey(chatId, sequenceNumber),
      ...whileStatus(expected, set, also),
    });
  }

  /** Stores the reply under its prompt at the chat's next sequence number, status streaming, with no text yet. */
  async start(r: NewReply): Promise<ReplyState> {
    const internal = { promptId: r.promptId, promptSequence: r.promptSequence, deltaEnds: [], heartbeatAt: r.now };
    const message = await new MessageRepository(this.db, this.table).append({
      id: r.id,
      chatId: r.chatId,
      userId: r.userId,
      parentId: r.promptId,
      message: '',
      messageType: 'ai',
      type: 'message',
      ...(r.sources && { sources: r.sources }),
      status: 'streaming',
      internal,
      timestamp: r.now,
    });
    return stateOf({ ...internal, ...message })!;
  }

  /** The reply with this id in this chat; undefined when there is none (or it is not a stored stream). */
  async get(chatId: string, messageId: string): Promise<ReplyState | undefined> {
    const pointer = await this.db.send(
      new GetCommand({ TableName: this.table, Key: messageIdKey(chatId, messageId), ConsistentRead: true }),
    );
    const sequence = pointer.Item?.sequenceNumber;
    if (typeof sequence !== 'number') return undefined;
    return this.at(chatId, sequence);
  }

  /** The reply at a sequence number, read consistently. */
  async at(chatId: string, sequenceNumber: number): Promise<ReplyState | undefined> {
    const out = await this.db.send(
      new GetCommand({ TableName: this.table, Key: messageKey(chatId, sequenceNumber), ConsistentRead: true }),
    );
    return out.Item ? stateOf(out.Item) : undefined;
  }

  /** Its status only (the generator's check for a stop between writes). */
  async statusAt(chatId: string, sequenceNumber: number): Promise<ReplyStatus | undefined> {
    const out = await this.db.send(
      new GetCommand({
        TableName: this.table,
        Key: messageKey(chatId, sequenceNumber),
        ProjectionExpression: '#status',
        ExpressionAttributeNames: { '#status': 'status' },
        ConsistentRead: true,
      }),
    );
    return out.Item?.status as ReplyStatus | undefined;
  }

  /**
   * The text so far and the generator's heartbeat; false when refused: the reply is no longer
   * streaming (stopped, failed as stale) or is gone with its chat.
   */
  progress(chatId: string, sequenceNumber: number, p: { text: string; deltaEnds: number[]; now: string }) {
    return this.updateWhile(chatId, sequenceNumber, 'streaming', {
      message: p.text,
      deltaEnds: p.deltaEnds,
      heartbeatAt: p.now,
    });
  }

  /**
   * The generator's last write: everything it generated, with its usage. A reply stopped
   * meanwhile stays stopped (and incomplete); false when the reply is gone.
   */
  async finish(chatId: string, sequenceNumber: number, f: FinishedReply): Promise<ReplyStatus | undefined> {
    const write = (status: ReplyStatus, expected: ReplyStatus) =>
      this.updateWhile(chatId, sequenceNumber, expected, {
        message: f.text,
        deltaEnds: f.deltaEnds,
        heartbeatAt: f.now,
        status,
        finished: true,
        usage: f.usage,
        sources: f.sources,
        cited: f.cited,
        failureMessage: f.failureMessage,
        title: f.title,
        incomplete: status === 'complete' ? undefined : true,
      });
    let status: ReplyStatus | undefined;
    if (await write(f.status, 'streaming')) status = f.status;
    else if (await write('stopped', 'stopped')) status = 'stopped';
    if (status) await new SearchIndex(this.db, this.table).addStored(chatId, sequenceNumber); // final text
    return status;
  }

  /** Asks the generator to stop: true when the reply was streaming and now is stopped. */
  stop(chatId: string, sequenceNumber: number): Promise<boolean> {
    return this.updateWhile(chatId, sequenceNumber, 'streaming', { status: 'stopped' });
  }

  /**
   * A reply whose generator stopped beating before `staleBefore` (its instance died) is failed
   * with what it had stored; a stopped one is finished as it is. True when this call did it.
   */
  async failStale(chatId: string, sequenceNumber: number, staleBefore: string, message: string): Promise<boolean> {
    const stale = {
      condition: 'heartbeatAt < :before AND attribute_not_exists(finished)',
      values: { ':before': staleBefore },
    };
    const ended = { incomplete: true, finished: true };
    const failed =
      (await this.updateWhile(
        chatId,
        sequenceNumber,
        'streaming',
        { ...ended, status: 'failed', failureMessage: message },
        stale,
      )) || (await this.updateWhile(chatId, sequenceNumber, 'stopped', ended, stale));
    if (failed) await new SearchIndex(this.db, this.table).addStored(chatId, sequenceNumber); // what it had stored
    return failed;
  }
}
