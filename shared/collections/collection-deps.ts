import { dynamo } from '../clients.ts';
import type { Clock } from '../clock.ts';
import type { Config } from '../config.ts';
import { FileRepository } from '../files/file-repository.ts';
import { CollectionRepository } from './collection-repository.ts';
import { collectionSettings, type CollectionDeps } from './collection-service.ts';

/** What the collection routes work with, from the configuration. */
export const collectionDeps = (settings: Config, clock: Clock): CollectionDeps => ({
  collections: new CollectionRepository(dynamo(), settings.TABLE_NAME),
  files: new FileRepository(dynamo(), settings.TABLE_NAME),
  clock,
  settings: collectionSettings(settings),
});
