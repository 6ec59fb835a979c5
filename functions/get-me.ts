import '#shared/config/limits.ts';
import '#shared/config/uploads.ts';
import { usageRoutes } from '#shared/usage/routes.ts';
import { httpHandler } from '#shared/http/handler.ts';
import { systemClock } from '#shared/clock.ts';
import { config } from '#shared/config.ts';
import { dynamo, tableName } from '#shared/clients.ts';
import { UsageLedger } from '#shared/limits/usage-ledger.ts';
import { getMe, type MeDeps } from '#shared/usage/me-service.ts';
import { UserRepository } from '#shared/users/user-repository.ts';

// GET /me: the signed-in user and their usage, read from their counters.
const settings = config();
const deps: MeDeps = {
  users: new UserRepository(dynamo(), tableName()),
  usage: new UsageLedger(dynamo(), tableName(), systemClock),
  clock: systemClock,
  settings: { dailyTokens: settings.DAILY_TOKEN_BUDGET, storageMaxBytes: settings.USER_STORAGE_MAX_BYTES },
};

export const handler = httpHandler(usageRoutes['get-me'], {}, ({ user }) => getMe(deps, user.id));
