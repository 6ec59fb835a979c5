import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { SQSClient } from '@aws-sdk/client-sqs';
import { SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { config, ConfigError, type Config } from './config.ts';
import { traced } from './observability/tracing.ts';

// AWS clients, each created once per cold start on first use and reused by every invocation,
// traced in X-Ray when tracing is on (shared/observability/tracing.ts).
// Endpoints point at the local emulators when set; in AWS they are unset. The S3 client is in
// s3-client.ts, so that a function reaching it only on some paths (send-message: file chats)
// loads it with the code of those paths.

let documentClient: DynamoDBDocumentClient | undefined;
let sqs: SQSClient | undefined;
let secrets: SecretsManagerClient | undefined;

/** A DynamoDB document client for a configuration (tools and checks that hold their own). */
export function createDocumentClient({
  AWS_REGION,
  DYNAMODB_ENDPOINT,
}: Pick<Config, 'AWS_REGION' | 'DYNAMODB_ENDPOINT'>): DynamoDBDocumentClient {
  const client = traced(
    new DynamoDBClient({ region: AWS_REGION, ...(DYNAMODB_ENDPOINT && { endpoint: DYNAMODB_ENDPOINT }) }),
  );
  return DynamoDBDocumentClient.from(client, {
    marshallOptions: { removeUndefinedValues: true, convertClassInstanceToMap: false },
  });
}

export function dynamo(): DynamoDBDocumentClient {
  documentClient ??= createDocumentClient(config());
  return documentClient;
}

export function sqsClient(): SQSClient {
  if (!sqs) {
    const { AWS_REGION, SQS_ENDPOINT } = config();
    sqs = traced(new SQSClient({ region: AWS_REGION, ...(SQS_ENDPOINT && { endpoint: SQS_ENDPOINT }) }));
  }
  return sqs;
}

export function secretsClient(): SecretsManagerClient {
  if (!secrets) {
    const { AWS_REGION, SECRETS_MANAGER_ENDPOINT } = config();
    secrets = traced(
      new SecretsManagerClient({
        region: AWS_REGION,
        ...(SECRETS_MANAGER_ENDPOINT && { endpoint: SECRETS_MANAGER_ENDPOINT }),
      }),
    );
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
