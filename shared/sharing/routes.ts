// What this domain's routes are, by function name: the fields of the HTTP layer's route
// (HttpRouteSettings, which infra/routes.ts checks each against; no import of shared/http here, which
// builds on the domains). What their functions get is the deployment's (infra/deployment/).

export const sharingRoutes = {
  // Export and share (docs/DECISIONS.md, Export and share). The export is a file, streamed as it
  // is written (no 6 MB buffered-payload cap); its errors are envelopes. A shared chat is read
  // without a sign-in: `public`, limited per source IP, and throttled at the stage (stack).
  'export-chat': {
    method: 'GET',
    path: '/chat/{chatId}/export',
    auth: 'user',
    shape: 'envelope',
    keyScope: 'read',
    streaming: true,
  },
  'share-chat': {
    method: 'POST',
    path: '/chat/{chatId}/share',
    auth: 'user',
    shape: 'envelope',
    success: { status: 201, message: 'Chat shared' },
  },
  'revoke-share': {
    method: 'DELETE',
    path: '/chat/{chatId}/share',
    auth: 'user',
    shape: 'envelope',
    success: { status: 200, message: 'Share revoked' },
  },
  'get-shared-chat': {
    method: 'GET',
    path: '/shared/{shareId}',
    auth: 'public',
    shape: 'envelope',
    rateLimit: 'sharedReads',
    success: { status: 200 },
  },
} as const;
