import { httpRoutes } from '#infra/routes.ts';
import { httpHandler } from '#shared/http/handler.ts';
import { config } from '#shared/config.ts';
import { systemClock } from '#shared/clock.ts';
import { dynamo, tableName } from '#shared/clients.ts';
import { aiProvider } from '#shared/ai/provider.ts';
import { chatFilesDeps } from '#shared/files/chat-files.ts';
import { chatRepositories } from '#shared/chats/repositories.ts';
import { sendMessageBody } from '#shared/chats/schemas.ts';
import { replySettings, sendMessage, streamMessage, type SendMessageDeps } from '#shared/chats/send-message.ts';
import { retrieverOnFirstUse } from '#shared/retrieval/retriever-on-first-use.ts';
import { userLimits } from '#shared/limits/user-limits.ts';

// POST /message/logged-in: a prompt to the assistant; the reply whole (stream false) or as
// Server-Sent Events (stream true) through Lambda response streaming. The retrieval of file
// chats is loaded on its first use.

const settings = config();
const deps: SendMessageDeps = {
  ...chatRepositories(dynamo(), tableName()),
  provider: await aiProvider(),
  retrieve: retrieverOnFirstUse(settings, dynamo()),
  budget: userLimits(dynamo(), settings, systemClock),
  files: chatFilesDeps(dynamo(), tableName()),
  clock: systemClock,
  settings: replySettings(settings),
};

export const handler = httpHandler(
  httpRoutes['send-message'],
  { body: sendMessageBody },
  async ({ body: { stream, ...prompt }, user, context }) => {
    const request = { userId: user.id, ...prompt, remainingMs: context.getRemainingTimeInMillis?.() };
    return stream
      ? { events: { source: await streamMessage(deps, request), heartbeatMs: settings.STREAM_HEARTBEAT_MS } }
      : { message: 'Reply generated', data: await sendMessage(deps, request) };
  },
);
