import { accountExportRoutes } from '#shared/account-export/routes.ts';
import { httpHandler } from '#shared/http/handler.ts';
import { systemClock } from '#shared/clock.ts';
import { accountExportDeps } from '#shared/account-export/account-export-deps.ts';
import { requestExport } from '#shared/account-export/account-export.ts';

// POST /me/export: a job the data sweep builds into a ZIP of everything of the caller's.

const deps = accountExportDeps(systemClock);

export const handler = httpHandler(accountExportRoutes['create-export'], {}, ({ user }) =>
  requestExport(deps, user.id),
);
