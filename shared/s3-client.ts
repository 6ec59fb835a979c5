import { S3Client } from '@aws-sdk/client-s3';
import { config } from './config.ts';
import { traced } from './tracing.ts';

// The S3 client, created once per cold start on first use (see clients.ts). A module of its own:
// the S3 SDK is a large part of any bundle that imports it, and send-message needs it only for
// file chats, whose retrieval it imports on their first prompt.

let s3: S3Client | undefined;

export function s3Client(): S3Client {
  if (!s3) {
    const { AWS_REGION, S3_ENDPOINT } = config();
    s3 = traced(
      new S3Client({
        region: AWS_REGION,
        // Presigned URLs must not carry checksum parameters a browser upload cannot satisfy.
        requestChecksumCalculation: 'WHEN_REQUIRED',
        responseChecksumValidation: 'WHEN_REQUIRED',
        ...(S3_ENDPOINT && { endpoint: S3_ENDPOINT, forcePathStyle: true }),
      }),
    );
  }
  return s3;
}
