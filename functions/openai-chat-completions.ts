import '#shared/config/chat.ts';
import { completionRoutes } from '#shared/completions/routes.ts';
import { httpHandler } from '#shared/http/handler.ts';
import { config } from '#shared/config.ts';
import { systemClock } from '#shared/clock.ts';
import { completionDeps } from '#shared/completions/completion-deps.ts';
import { createCompletion, streamCompletion } from '#shared/completions/completions.ts';
import { chatCompletionBody } from '#shared/completions/schemas.ts';

// POST /openai/chat/completions: OpenAI's chat completions over the caller's documents, whole
// (chat.completion) or streamed (chat.completion.chunk events) through Lambda response streaming.

const settings = config();
const deps = await completionDeps(settings, systemClock);

export const handler = httpHandler(
  completionRoutes['openai-chat-completions'],
  { body: chatCompletionBody },
  async ({ body, user, context }) => {
    const request = { userId: user.id, body, remainingMs: context.getRemainingTimeInMillis?.() };
    return body.stream
      ? { events: { source: await streamCompletion(deps, request), heartbeatMs: settings.STREAM_HEARTBEAT_MS } }
      : { data: await createCompletion(deps, request) };
  },
);
