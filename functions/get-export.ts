import { accountExportRoutes } from '#shared/account-export/routes.ts';
import { httpHandler } from '#shared/http/handler.ts';
import { systemClock } from '#shared/clock.ts';
import { accountExportDeps } from '#shared/account-export/account-export-deps.ts';
import { getExport } from '#shared/account-export/account-export.ts';
import { exportIdParams } from '#shared/account-export/schemas.ts';

// GET /me/export/{exportId}: the caller's export job, and a URL of its ZIP once built.

const deps = accountExportDeps(systemClock);

export const handler = httpHandler(accountExportRoutes['get-export'], { params: exportIdParams }, ({ params, user }) =>
  getExport(deps, { userId: user.id, exportId: params.exportId }),
);
