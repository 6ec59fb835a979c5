import { erasureRoutes } from '#shared/erasure/routes.ts';
import { httpHandler } from '#shared/http/handler.ts';
import { config } from '#shared/config.ts';
import { systemClock } from '#shared/clock.ts';
import { erasureDeps } from '#shared/erasure/erasure-deps.ts';
import { requestErasure } from '#shared/erasure/erasure.ts';

// DELETE /me: mark the user erasing (its tokens stop at once), then erase while this invocation has
// time; the sweep finishes what is left.

const deps = erasureDeps(config(), systemClock);
/** Time kept back from the function's timeout to answer in. */
const ANSWER_MARGIN_MS = 5_000;

export const handler = httpHandler(erasureRoutes['delete-me'], {}, async ({ user, context }) => {
  const deadline = Date.now() + (context.getRemainingTimeInMillis?.() ?? 30_000) - ANSWER_MARGIN_MS;
  return { status: await requestErasure(deps, { userId: user.id, hasTime: () => Date.now() < deadline }) };
});
