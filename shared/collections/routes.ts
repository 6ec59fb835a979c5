// What this domain's routes are, by function name: the fields of the HTTP layer's route
// (HttpRouteSettings, which infra/routes.ts checks each against; no import of shared/http here, which
// builds on the domains). What their functions get is the deployment's (infra/deployment/).

export const collectionRoutes = {
  'create-collection': {
    method: 'POST',
    path: '/collections',
    auth: 'user',
    shape: 'envelope',
    keyScope: 'files',
    success: { status: 201, message: 'Collection created' },
  },
  'list-collections': {
    method: 'GET',
    path: '/collections',
    auth: 'user',
    shape: 'envelope',
    keyScope: 'read',
  },
  'get-collection': {
    method: 'GET',
    path: '/collections/{id}',
    auth: 'user',
    shape: 'envelope',
    keyScope: 'read',
    success: { status: 200 },
  },
  'update-collection': {
    method: 'PUT',
    path: '/collections/{id}',
    auth: 'user',
    shape: 'envelope',
    keyScope: 'files',
    success: { status: 200, message: 'Collection updated' },
  },
  'delete-collection': {
    method: 'DELETE',
    path: '/collections/{id}',
    auth: 'user',
    shape: 'envelope',
    keyScope: 'files',
    success: { status: 200, message: 'Collection deleted' },
  },
  'add-collection-file': {
    method: 'PUT',
    path: '/collections/{id}/files/{fileId}',
    auth: 'user',
    shape: 'envelope',
    keyScope: 'files',
    success: { status: 200, message: 'File in collection' },
  },
  'remove-collection-file': {
    method: 'DELETE',
    path: '/collections/{id}/files/{fileId}',
    auth: 'user',
    shape: 'envelope',
    keyScope: 'files',
    success: { status: 200, message: 'File removed' },
  },
  'list-collection-files': {
    method: 'GET',
    path: '/collections/{id}/files',
    auth: 'user',
    shape: 'envelope',
    keyScope: 'read',
  },
} as const;
