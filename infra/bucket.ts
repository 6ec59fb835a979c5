// The bucket's CORS rule, described once: the stack gives it to S3 and the local runtime's S3
// answers browsers by it (infra/local/s3-cors.ts). Browsers PUT to and GET from presigned URLs.

export interface BucketCorsRule {
  allowedMethods: ('PUT' | 'GET' | 'HEAD')[];
  allowedOrigins: string[];
  /** Lower case; a trailing `*` matches any suffix, as in S3. */
  allowedHeaders: string[];
  exposedHeaders: string[];
  maxAge: number;
}

export function bucketCorsRule(allowedOrigin: string): BucketCorsRule {
  return {
    allowedMethods: ['PUT', 'GET', 'HEAD'],
    allowedOrigins: [allowedOrigin],
    allowedHeaders: ['content-type', 'content-length', 'content-md5', 'x-amz-*'],
    exposedHeaders: ['etag'],
    maxAge: 3600,
  };
}
