import '#shared/config/chat.ts';
import { chatRoutes } from '#shared/chats/routes.ts';
import { httpHandler } from '#shared/http/handler.ts';
import { config } from '#shared/config.ts';
import { systemClock } from '#shared/clock.ts';
import { replyDeps } from '#shared/chats/replies/reply-deps.ts';
import { regenerateBody, replyParams } from '#shared/chats/requests.ts';
import { sendMessage, streamMessage } from '#shared/chats/replies/send-message.ts';

// POST /chat/{chatId}/messages/{messageId}/regenerate: a new reply to the prompt of an ai
// message (its sibling), whole or streamed, as POST /message/logged-in answers.

const settings = config();
const deps = await replyDeps(settings, systemClock);

export const handler = httpHandler(
  chatRoutes['regenerate-reply'],
  { params: replyParams, body: regenerateBody },
  async ({ params, body: { stream }, user, context }) => {
    const request = { userId: user.id, ...params, remainingMs: context.getRemainingTimeInMillis?.() };
    return stream
      ? { events: { source: await streamMessage(deps, request), heartbeatMs: settings.STREAM_HEARTBEAT_MS } }
      : { message: 'Reply generated', data: await sendMessage(deps, request) };
  },
);
