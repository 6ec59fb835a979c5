import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { isConditionFailure, Repository, type Item } from '../../dynamo.ts';
import { messageKey } from '../keys.ts';
import { fromItem } from './message-repository.ts';
import type { Feedback, Message } from '../schemas.ts';

// A reply's feedback is one attribute of its message item (CHAT#<chatId> / MSG#<seq>), so every
// read of the message shows it. Each write is an UpdateItem on the message's key, conditional on
// the item still being that ai reply of that owner: a write racing a chat delete either lands
// before the item is removed (and goes with it) or is refused, and never recreates the item.

/** Where the reply is and whose it is (the item's own id and userId are checked again). */
export interface ReplyAt {
  chatId: string;
  sequenceNumber: number;
  messageId: string;
  userId: string;
}

/** The message as stored after the write, and the rating it had before. */
export interface FeedbackWrite {
  message: Message;
  previous: Feedback | undefined;
}

const STILL_THE_REPLY = 'attribute_exists(PK) AND #id = :id AND userId = :userId AND messageType = :ai';

export class FeedbackRepository extends Repository {
  /** Sets the reply's feedback (replacing any); undefined when the reply is gone. */
  set(at: ReplyAt, feedback: Feedback): Promise<FeedbackWrite | undefined> {
    return this.write(at, 'SET feedback = :feedback', { ':feedback': feedback }, (old) => ({ ...old, feedback }));
  }

  /** Removes the reply's feedback (none there: nothing changes); undefined when the reply is gone. */
  remove(at: ReplyAt): Promise<FeedbackWrite | undefined> {
    return this.write(at, 'REMOVE feedback', {}, ({ feedback: _, ...old }) => old);
  }

  /**
   * The update under the reply's condition. It returns the item as it was (for the previous
   * rating); the item as it is now differs from it only in `feedback`.
   */
  private async write(
    at: ReplyAt,
    update: string,
    values: Item,
    after: (old: Item) => Item,
  ): Promise<FeedbackWrite | undefined> {
    try {
      const out = await this.db.send(
        new UpdateCommand({
          TableName: this.table,
          Key: messageKey(at.chatId, at.sequenceNumber),
          UpdateExpression: update,
          ConditionExpression: STILL_THE_REPLY,
          ExpressionAttributeNames: { '#id': 'id' },
          ExpressionAttributeValues: { ...values, ':id': at.messageId, ':userId': at.userId, ':ai': 'ai' },
          ReturnValues: 'ALL_OLD',
        }),
      );
      const old = out.Attributes ?? {};
      return { message: fromItem(after(old)), previous: old.feedback as Feedback | undefined };
    } catch (err) {
      if (isConditionFailure(err)) return undefined;
      throw err;
    }
  }
}
