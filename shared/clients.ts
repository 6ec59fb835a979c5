import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { S3Client } from '@aws-sdk/client-s3';
import { SQSClient } from '@aws-sdk/client-sqs';
import { SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { config, ConfigError } from './config.ts';

// AWS clients, each created once per cold start on first use and reused by every invocation.
// Endpoints point at the local emulators when set; in AWS they are unset.

let documentClient: DynamoDBDocumentClient | undefined;
let s3: S3Client | undefined;
let sqs: SQSClient | undefined;
let secrets: SecretsManagerClient | undefined;

export function dynamo(): DynamoDBDocumentClient {
  if (!documentClient) {
    const { AWS_REGION, DYNAMODB_ENDPOINT } = config();
    const client = new DynamoDBClient({ region: AWS_REGION, ...(DYNAMODB_ENDPOINT && { endpoint: DYNAMODB_ENDPOINT }) });
    documentClient = DynamoDBDocumentClient.from(client, {
      marshallOptions: { removeUndefinedValues: true, convertClassInstanceToMap: false },
    });
  }
  return documentClient;
}

export function s3Client(): S3Client {
  if (!s3) {
    const { AWS_REGION, S3_ENDPOINT } = config();
    s3 = new S3Client({
      region: AWS_REGION,
      // Presigned URLs must not carry checksum parameters a browser upload cannot satisfy.
      requestChecksumCalculation: 'WHEN_REQUIRED',
      responseChecksumValidation: 'WHEN_REQUIRED',
      ...(S3_ENDPOINT && { endpoint: S3_ENDPOINT, forcePathStyle: true }),
    });
  }
  return s3;
}

export function sqsClient(): SQSClient {
  if (!sqs) {
    const { AWS_REGION, SQS_ENDPOINT } = config();
    sqs = new SQSClient({ region: AWS_REGION, ...(SQS_ENDPOINT && { endpoint: SQS_ENDPOINT }) });
  }
  return sqs;
}

export function secretsClient(): SecretsManagerClient {
  if (!secrets) {
    const { AWS_REGION, SECRETS_MANAGER_ENDPOINT } = config();
    secrets = new SecretsManagerClient({
      region: AWS_REGION,
      ...(SECRETS_MANAGER_ENDPOINT && { endpoint: SECRETS_MANAGER_ENDPOINT }),
    });
  }
  return secrets;
}

export function tableName(): string {
  return config().TABLE_NAME;
}

/** The bucket of the functions that use one (the stack sets it; its absence is a wiring bug). */
export function bucketName(): string {
  const { BUCKET_NAME } = config();
  if (!BUCKET_NAME) throw new ConfigError('BUCKET_NAME must be set for this function');
  return BUCKET_NAME;
}
