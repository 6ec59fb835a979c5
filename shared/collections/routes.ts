import type { RouteDefinitions } from '../http/route.ts';

// What the routes of this domain are (the HTTP layer reads them); what their deployment gets is
// infra's (infra/deployment/, by function name).

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
} as const satisfies RouteDefinitions;
