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
  },
  'update-collection': {
    method: 'PUT',
    path: '/collections/{id}',
    auth: 'user',
    shape: 'envelope',
    keyScope: 'files',
  },
  'delete-collection': {
    method: 'DELETE',
    path: '/collections/{id}',
    auth: 'user',
    shape: 'envelope',
    keyScope: 'files',
  },
  'add-collection-file': {
    method: 'PUT',
    path: '/collections/{id}/files/{fileId}',
    auth: 'user',
    shape: 'envelope',
    keyScope: 'files',
  },
  'remove-collection-file': {
    method: 'DELETE',
    path: '/collections/{id}/files/{fileId}',
    auth: 'user',
    shape: 'envelope',
    keyScope: 'files',
  },
  'list-collection-files': {
    method: 'GET',
    path: '/collections/{id}/files',
    auth: 'user',
    shape: 'envelope',
    keyScope: 'read',
  },
} as const;
