import { fileRoutes } from '#shared/files/routes.ts';
import { httpHandler } from '#shared/http/handler.ts';
import { config } from '#shared/config.ts';
import { systemClock } from '#shared/clock.ts';
import { ingestDeps } from '#shared/ingestion/ingest-deps.ts';
import { ingestPdf } from '#shared/ingestion/ingest-service.ts';
import { ingestPdfBody } from '#shared/files/schemas.ts';

// POST /message/pdf: check the URL and its size, start the pipeline (or queue), wait a while for it.
const settings = config();
const deps = ingestDeps(settings, systemClock);

export const handler = httpHandler(
  fileRoutes['ingest-pdf'],
  { body: ingestPdfBody },
  async ({ body, user, context }) => {
    const remainingMs = context.getRemainingTimeInMillis?.();
    const { completed, embeddingsData } = await ingestPdf(deps, { userId: user.id, body, remainingMs });
    return completed
      ? { statusCode: 200, message: 'Document ingested', data: { embeddingsData } }
      : { statusCode: 202, message: 'Document ingestion in progress', data: { embeddingsData } };
  },
);
