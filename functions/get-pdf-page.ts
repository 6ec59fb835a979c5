import { httpRoutes } from '#infra/routes.ts';
import { httpHandler } from '#shared/http/handler.ts';
import { bucketName, dynamo } from '#shared/clients.ts';
import { config } from '#shared/config.ts';
import { FileRepository } from '#shared/files/file-repository.ts';
import { pdfPageParams } from '#shared/files/schemas.ts';
import { FileStorage } from '#shared/files/storage.ts';
import { getPdfPage, pageRenderLimits } from '#shared/pdf/page-service.ts';
import { s3Client } from '#shared/s3-client.ts';

// GET /message/pdf/{fileId}/pages/{page}: the page's text (what sources' offsets index) and a URL of its image.

const settings = config();
const route = httpRoutes['get-pdf-page'];
const deps = {
  files: new FileRepository(dynamo(), settings.TABLE_NAME),
  storage: new FileStorage(s3Client(), bucketName()),
  s3: s3Client(),
  settings: {
    dpi: settings.PAGE_IMAGE_DPI,
    limits: pageRenderLimits(settings, route.memoryMb),
    urlTtlSeconds: settings.UPLOAD_URL_TTL_SECONDS,
  },
};

export const handler = httpHandler(route, { params: pdfPageParams }, async ({ params, user }) => ({
  data: await getPdfPage(deps, { userId: user.id, fileId: params.fileId, page: Number(params.page) }),
}));
