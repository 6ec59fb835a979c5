import '#shared/config/chat.ts';
import { chatRoutes } from '#shared/chats/routes.ts';
import { httpHandler } from '#shared/http/handler.ts';
import { config } from '#shared/config.ts';
import { systemClock } from '#shared/clock.ts';
import { replyDeps } from '#shared/chats/replies/reply-deps.ts';
import { sendMessageBody } from '#shared/chats/requests.ts';
import { sendMessage, streamMessage } from '#shared/chats/replies/send-message.ts';

// POST /message/logged-in: a prompt to the assistant; the reply whole (stream false) or as
// Server-Sent Events (stream true) through Lambda response streaming.

const settings = config();
const deps = await replyDeps(settings, systemClock);

export const handler = httpHandler(
  chatRoutes['send-message'],
  { body: sendMessageBody },
  async ({ body: { stream, ...prompt }, user, context }) => {
    const request = { userId: user.id, ...prompt, remainingMs: context.getRemainingTimeInMillis?.() };
    return stream
      ? { events: { source: await streamMessage(deps, request), heartbeatMs: settings.STREAM_HEARTBEAT_MS } }
      : { message: 'Reply generated', data: await sendMessage(deps, request) };
  },
);
