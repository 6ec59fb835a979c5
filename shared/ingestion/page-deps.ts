import '../config/pdf.ts';
import '../config/uploads.ts';
import { bucketName, dynamo } from '../clients.ts';
import type { Config } from '../config.ts';
import { FileRepository } from '../files/file-repository.ts';
import { FileStorage } from '../files/storage.ts';
import { s3Client } from '../s3-client.ts';
import { pageRenderLimits, type PageServiceDeps } from './page-service.ts';

// The page and part routes' dependencies, composed once for both (they read the same objects and
// draw PDF pages with the same bounds, scaled to the function's memory).
export function pageServiceDeps(settings: Config, memoryMb: number): PageServiceDeps {
  return {
    files: new FileRepository(dynamo(), settings.TABLE_NAME),
    storage: new FileStorage(s3Client(), bucketName()),
    s3: s3Client(),
    settings: {
      dpi: settings.PAGE_IMAGE_DPI,
      limits: pageRenderLimits(settings, memoryMb),
      urlTtlSeconds: settings.UPLOAD_URL_TTL_SECONDS,
    },
  };
}
