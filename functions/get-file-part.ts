import { fileRoutes } from '#shared/files/routes.ts';
import { httpHandler } from '#shared/http/handler.ts';
import { config } from '#shared/config.ts';
import { filePartParams } from '#shared/files/schemas.ts';
import { pageServiceDeps } from '#shared/ingestion/page-deps.ts';
import { getFilePart, PAGE_FUNCTION_MEMORY_MB } from '#shared/ingestion/page-service.ts';

// GET /files/{fileId}/parts/{part}: a part of any format, its place and text (what sources' offsets index).

const route = fileRoutes['get-file-part'];
const deps = pageServiceDeps(config(), PAGE_FUNCTION_MEMORY_MB);

export const handler = httpHandler(route, { params: filePartParams }, ({ params, user }) =>
  getFilePart(deps, { userId: user.id, fileId: params.fileId, part: Number(params.part) }),
);
