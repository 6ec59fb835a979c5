import type { Context } from 'aws-lambda';
import { httpRoutes } from '#infra/routes.ts';
import { httpHandler } from '#shared/http/handler.ts';
import { config } from '#shared/config.ts';
import { systemClock } from '#shared/clock.ts';
import { dynamo, tableName } from '#shared/clients.ts';
import { aiProvider } from '#shared/ai/provider.ts';
import { AttachmentRepository } from '#shared/files/attachment-repository.ts';
import { FileRepository } from '#shared/files/file-repository.ts';
import { chatFiles } from '#shared/files/chat-files.ts';
import { ChatRepository } from '#shared/chats/chat-repository.ts';
import { MessageRepository } from '#shared/chats/message-repository.ts';
import { sendMessageBody } from '#shared/chats/schemas.ts';
import { sendMessage, streamMessage, type SendMessageDeps } from '#shared/chats/send-message.ts';
import type { Retriever } from '#shared/retrieval/retrieve.ts';
import { replyAsSse } from '#shared/http/sse.ts';
import { limitSettings, UserLimits } from '#shared/limits/user-limits.ts';
import { UsageCounters } from '#shared/limits/usage-counters.ts';

// POST /message/logged-in: a prompt to the assistant; the reply whole (stream false) or as
// Server-Sent Events (stream true) through Lambda response streaming.
const settings = config();
// File chats search their PDFs' packed vectors in S3: the retrieval code and the S3 client are
// imported, and the retriever composed, on an instance's first file-chat prompt, so a cold start
// parses neither.
let retriever: Promise<Retriever> | undefined;
const composeRetriever = async () => {
  const [{ retrieverFor }, { s3Client }] = await Promise.all([
    import('#shared/retrieval/retrieve.ts'),
    import('#shared/s3-client.ts'),
  ]);
  return retrieverFor(settings, dynamo(), s3Client());
};
const retrieve: SendMessageDeps['retrieve'] = async (input) => {
  retriever ??= composeRetriever();
  return (await retriever)(input);
};
const files = {
  attachments: new AttachmentRepository(dynamo(), tableName()),
  files: new FileRepository(dynamo(), tableName()),
};
const deps: SendMessageDeps = {
  chats: new ChatRepository(dynamo(), tableName()),
  messages: new MessageRepository(dynamo(), tableName()),
  provider: await aiProvider(),
  retrieve,
  budget: new UserLimits(new UsageCounters(dynamo(), tableName()), limitSettings(settings), systemClock),
  chatFiles: (chatId) => chatFiles(files, chatId),
  clock: systemClock,
  settings: {
    historyTokenBudget: settings.HISTORY_TOKEN_BUDGET,
    replyMaxTokens: settings.REPLY_MAX_TOKENS,
    retrievalK: settings.RETRIEVAL_K,
  },
};

/** Time left for the model once storing the reply and closing the stream are allowed for. */
const DEADLINE_MARGIN_MS = 5_000;
const deadlineOf = (context: Context) => {
  const remaining = context.getRemainingTimeInMillis?.();
  return remaining ? Math.max(1_000, remaining - DEADLINE_MARGIN_MS) : undefined;
};

export const handler = httpHandler(
  httpRoutes['send-message'],
  { body: sendMessageBody },
  async ({ body, user, context }) => {
    const deadlineMs = deadlineOf(context);
    const request = { userId: user.id, chatId: body.chatId, prompt: body.prompt, ...(deadlineMs && { deadlineMs }) };
    if (body.stream) {
      const reply = await streamMessage(deps, request);
      return {
        events: {
          open: (clientGone) => replyAsSse(reply.events(clientGone)),
          heartbeatMs: settings.STREAM_HEARTBEAT_MS,
        },
      };
    }
    return { message: 'Reply generated', data: await sendMessage(deps, request) };
  },
);
