import { S3Client } from '@aws-sdk/client-s3';
import { config, type Config } from './config.ts';
import { traced } from './observability/tracing.ts';

// The S3 client, created once per cold start on first use (see clients.ts). A module of its own:
// the S3 SDK is a large part of any bundle that imports it, and send-message needs it only for
// file chats, whose retrieval it imports on their first prompt.

let s3: S3Client | undefined;

/** An S3 client for a configuration (tools and tests that hold their own). */
export function createS3Client({ AWS_REGION, S3_ENDPOINT }: Pick<Config, 'AWS_REGION' | 'S3_ENDPOINT'>): S3Client {
  return traced(
    new S3Client({
      region: AWS_REGION,
      // Presigned URLs must not carry checksum parameters a browser upload cannot satisfy.
      requestChecksumCalculation: 'WHEN_REQUIRED',
      responseChecksumValidation: 'WHEN_REQUIRED',
      ...(S3_ENDPOINT && { endpoint: S3_ENDPOINT, forcePathStyle: true }),
    }),
  );
}

export function s3Client(): S3Client {
  s3 ??= createS3Client(config());
  return s3;
}
