import { fileRoutes } from '#shared/files/routes.ts';
import { httpHandler } from '#shared/http/handler.ts';
import { config } from '#shared/config.ts';
import { pdfPageParams } from '#shared/files/schemas.ts';
import { pageServiceDeps } from '#shared/ingestion/page-deps.ts';
import { getPdfPage, PAGE_FUNCTION_MEMORY_MB } from '#shared/ingestion/page-service.ts';

// GET /message/pdf/{fileId}/pages/{page}: the page's text (what sources' offsets index) and a URL of its image.

const route = fileRoutes['get-pdf-page'];
const deps = pageServiceDeps(config(), PAGE_FUNCTION_MEMORY_MB);

export const handler = httpHandler(route, { params: pdfPageParams }, ({ params, user }) =>
  getPdfPage(deps, { userId: user.id, fileId: params.fileId, page: Number(params.page) }),
);
