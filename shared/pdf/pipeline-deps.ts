import type { SQSClient } from '@aws-sdk/client-sqs';
import { bucketName, dynamo, sqsClient, tableName } from '../clients.ts';
import { s3Client } from '../s3-client.ts';
import { config, type Config } from '../config.ts';
import { ChunkRepository } from '../files/chunk-repository.ts';
import { FileRepository } from '../files/file-repository.ts';
import { FileStorage } from '../files/storage.ts';

// What every pipeline stage works with, created once per cold start.

export interface PipelineDeps {
  files: FileRepository;
  chunks: ChunkRepository;
  storage: FileStorage;
  sqs: SQSClient;
  config: Config;
  now: () => string;
}

let cached: PipelineDeps | undefined;

export function pipelineDeps(): PipelineDeps {
  if (!cached) {
    const c = config();
    cached = {
      files: new FileRepository(dynamo(), tableName()),
      chunks: new ChunkRepository(dynamo(), tableName()),
      storage: new FileStorage(s3Client(), bucketName()),
      sqs: sqsClient(),
      config: c,
      now: () => new Date().toISOString(),
    };
  }
  return cached;
}
