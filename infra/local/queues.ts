import { CreateQueueCommand, GetQueueAttributesCommand, SQSClient } from '@aws-sdk/client-sqs';
import { CreateBucketCommand, S3Client } from '@aws-sdk/client-s3';
import { pipelineStageList, type PipelineStageName } from '../routes.ts';
import { LOCAL_CREDENTIALS, LOCAL_REGION } from './emulators.ts';
import { errorName } from '#shared/errors.ts';

// Queues (each with its DLQ) and the bucket, created through the SQS and S3 APIs so the same
// code provisions an emulator in this process or in another one.

export interface QueueInfo {
  url: string;
  arn: string;
  dlqUrl: string;
  dlqArn: string;
}

export async function ensureQueues(
  endpoint: string,
  prefix: string,
  visibilityTimeoutSeconds: (stage: PipelineStageName) => number,
): Promise<Record<PipelineStageName, QueueInfo>> {
  const sqs = new SQSClient({ endpoint, region: LOCAL_REGION, credentials: LOCAL_CREDENTIALS });
  const arnOf = async (url: string) =>
    (await sqs.send(new GetQueueAttributesCommand({ QueueUrl: url, AttributeNames: ['QueueArn'] }))).Attributes!
      .QueueArn!;
  const out = {} as Record<PipelineStageName, QueueInfo>;
  for (const stage of pipelineStageList) {
    const dlq = await sqs.send(new CreateQueueCommand({ QueueName: `${prefix}${stage.queue}-dlq` }));
    const dlqArn = await arnOf(dlq.QueueUrl!);
    const queue = await sqs.send(
      new CreateQueueCommand({
        QueueName: `${prefix}${stage.queue}`,
        Attributes: {
          VisibilityTimeout: String(visibilityTimeoutSeconds(stage.name)),
          RedrivePolicy: JSON.stringify({
            deadLetterTargetArn: dlqArn,
            maxReceiveCount: String(stage.maxReceiveCount),
          }),
        },
      }),
    );
    out[stage.name] = { url: queue.QueueUrl!, arn: await arnOf(queue.QueueUrl!), dlqUrl: dlq.QueueUrl!, dlqArn };
  }
  sqs.destroy();
  return out;
}

/** One queue with its DLQ (the webhook queue), as ensureQueues makes the stages'. */
export async function ensureQueue(
  endpoint: string,
  name: string,
  settings: { visibilityTimeoutSeconds: number; maxReceiveCount: number },
): Promise<QueueInfo> {
  const sqs = new SQSClient({ endpoint, region: LOCAL_REGION, credentials: LOCAL_CREDENTIALS });
  try {
    const arnOf = async (url: string) =>
      (await sqs.send(new GetQueueAttributesCommand({ QueueUrl: url, AttributeNames: ['QueueArn'] }))).Attributes!
        .QueueArn!;
    const dlq = await sqs.send(new CreateQueueCommand({ QueueName: `${name}-dlq` }));
    const dlqArn = await arnOf(dlq.QueueUrl!);
    const queue = await sqs.send(
      new CreateQueueCommand({
        QueueName: name,
        Attributes: {
          VisibilityTimeout: String(settings.visibilityTimeoutSeconds),
          RedrivePolicy: JSON.stringify({
            deadLetterTargetArn: dlqArn,
            maxReceiveCount: String(settings.maxReceiveCount),
          }),
        },
      }),
    );
    return { url: queue.QueueUrl!, arn: await arnOf(queue.QueueUrl!), dlqUrl: dlq.QueueUrl!, dlqArn };
  } finally {
    sqs.destroy();
  }
}

export async function ensureBucket(endpoint: string, bucket: string): Promise<void> {
  const s3 = new S3Client({ endpoint, region: LOCAL_REGION, credentials: LOCAL_CREDENTIALS, forcePathStyle: true });
  try {
    await s3.send(new CreateBucketCommand({ Bucket: bucket }));
  } catch (err) {
    const name = errorName(err);
    if (name !== 'BucketAlreadyOwnedByYou' && name !== 'BucketAlreadyExists') throw err;
  }
  s3.destroy();
}
