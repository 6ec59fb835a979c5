// What this domain's routes are, by function name: the fields of the HTTP layer's route
// (HttpRouteSettings, which infra/routes.ts checks each against; no import of shared/http here, which
// builds on the domains). What their functions get is the deployment's (infra/deployment/).

export const fileRoutes = {
  'create-upload': {
    method: 'POST',
    path: '/upload',
    auth: 'user',
    shape: 'envelope',
    keyScope: 'files',
    rateLimit: 'uploads',
    success: { status: 201, message: 'Upload created' },
  },
  // Large PDFs: an S3 multipart upload, a presigned PUT per part, completed with the parts' ETags.
  'create-multipart-upload': {
    method: 'POST',
    path: '/upload/multipart',
    auth: 'user',
    shape: 'envelope',
    keyScope: 'files',
    rateLimit: 'uploads',
    success: { status: 201, message: 'Multipart upload created' },
  },
  'complete-multipart-upload': {
    method: 'POST',
    path: '/upload/{fileId}/complete',
    auth: 'user',
    shape: 'envelope',
    keyScope: 'files',
    success: { status: 200, message: 'Upload completed' },
  },
  'list-uploads': {
    method: 'GET',
    path: '/upload',
    auth: 'user',
    shape: 'envelope',
    keyScope: 'read',
  },
  'delete-upload': {
    method: 'DELETE',
    path: '/upload/{fileId}',
    auth: 'user',
    shape: 'envelope',
    keyScope: 'files',
    success: { status: 200, message: 'File deleted' },
  },
  // Checks the URL and its size, starts the pipeline and waits up to PDF_SYNC_WAIT_MS for it.
  'ingest-pdf': {
    method: 'POST',
    path: '/message/pdf',
    auth: 'user',
    shape: 'envelope',
    keyScope: 'files',
    rateLimit: 'ingestions',
  },
  'get-pdf-status': {
    method: 'GET',
    path: '/message/pdf/{fileId}',
    auth: 'user',
    shape: 'envelope',
    keyScope: 'read',
    success: { status: 200 },
  },
  'get-pdf-page': {
    method: 'GET',
    path: '/message/pdf/{fileId}/pages/{page}',
    auth: 'user',
    shape: 'envelope',
    keyScope: 'read',
    rateLimit: 'pages',
    success: { status: 200 },
  },
  'get-file-part': {
    method: 'GET',
    path: '/files/{fileId}/parts/{part}',
    auth: 'user',
    shape: 'envelope',
    rateLimit: 'pages',
    success: { status: 200 },
  },
} as const;
