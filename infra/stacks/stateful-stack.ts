import { Duration, RemovalPolicy, Stack, Validations, type StackProps } from 'aws-cdk-lib';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import * as cloudwatchActions from 'aws-cdk-lib/aws-cloudwatch-actions';
import * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import * as s3 from 'aws-cdk-lib/aws-s3';
import * as s3vectors from 'aws-cdk-lib/aws-s3vectors';
import * as secretsmanager from 'aws-cdk-lib/aws-secretsmanager';
import * as sns from 'aws-cdk-lib/aws-sns';
import * as subscriptions from 'aws-cdk-lib/aws-sns-subscriptions';
import * as sqs from 'aws-cdk-lib/aws-sqs';
import type { Construct } from 'constructs';
import { pipelineStageList, visibilityTimeoutSeconds, webhookDelivery, type PipelineStageName } from '../routes.ts';
import { EXPORTS_PREFIX, UPLOADS_PREFIX, VECTORS_PREFIX, WORK_PREFIX } from '#shared/files/storage.ts';
import { tableDefinition } from '../table.ts';
import { bucketCorsRule } from '../bucket.ts';
import type { StackSettings } from '../settings.ts';

// What holds data and outlives deployments: the table, the bucket, the JWT signing secret,
// the pipeline queues with their dead-letter queues, and the alarm topic. The stateless stack
// (functions, API) can be destroyed and redeployed freely on top of it.

// Presigned uploads expire; a run that never completes leaves its work files behind.
export { UPLOADS_PREFIX, WORK_PREFIX } from '#shared/files/storage.ts';
export { VISIBILITY_TIMEOUT_FACTOR } from '../routes.ts';
/** Work files outlive any message that could still need them (DLQ retention). */
const WORK_FILES_DAYS = 14;
/** The files bucket's server access logs (who read or wrote which object) are kept this long. */
const ACCESS_LOG_DAYS = 90;

interface StatefulStackProps extends StackProps {
  settings: StackSettings;
}

interface PipelineQueue {
  queue: sqs.Queue;
  dlq: sqs.Queue;
}

export class StatefulStack extends Stack {
  readonly table: dynamodb.Table;
  readonly bucket: s3.Bucket;
  readonly jwtSecret: secretsmanager.Secret;
  readonly queues: Record<PipelineStageName, PipelineQueue>;
  /** The webhook deliveries' queue and its DLQ (docs/DECISIONS.md "Webhooks"). */
  readonly webhookQueue: PipelineQueue;
  readonly alarmTopic: sns.Topic;
  /** With VECTOR_STORE=s3vectors: the vector bucket (its indexes are made at run time, one per user and model). */
  readonly vectorBucket?: { name: string; arn: string };

  constructor(scope: Construct, id: string, props: StatefulStackProps) {
    super(scope, id, props);
    // S3 delivers the files bucket's access logs under a bucket policy, not an ACL (ACLs stay off).
    this.node.setContext('@aws-cdk/aws-s3:serverAccessLogsUseBucketPolicy', true);
    const { settings } = props;
    const removalPolicy = settings.retainData ? RemovalPolicy.RETAIN : RemovalPolicy.DESTROY;

    const { partitionKey, sortKey, globalSecondaryIndexes, timeToLiveAttribute } = tableDefinition;
    const key = (name: string) => ({ name, type: dynamodb.AttributeType.STRING });
    this.table = new dynamodb.Table(this, 'Table', {
      partitionKey: key(partitionKey),
      sortKey: key(sortKey),
      billingMode: dynamodb.BillingMode.PAY_PER_REQUEST,
      pointInTimeRecoverySpecification: { pointInTimeRecoveryEnabled: true },
      deletionProtection: settings.deletionProtection,
      encryption: dynamodb.TableEncryption.AWS_MANAGED,
      timeToLiveAttribute,
      removalPolicy,
    });
    for (const g of globalSecondaryIndexes) {
      this.table.addGlobalSecondaryIndex({
        indexName: g.indexName,
        partitionKey: key(g.partitionKey),
        sortKey: key(g.sortKey),
        projectionType: dynamodb.ProjectionType.ALL,
      });
    }

    // Server access logs of the files bucket: S3 delivers them under a bucket policy (no ACLs).
    const accessLogs = new s3.Bucket(this, 'FilesAccessLogs', {
      blockPublicAccess: s3.BlockPublicAccess.BLOCK_ALL,
      encryption: s3.BucketEncryption.S3_MANAGED,
      enforceSSL: true,
      objectOwnership: s3.ObjectOwnership.BUCKET_OWNER_ENFORCED,
      removalPolicy,
      lifecycleRules: [{ id: 'expire-access-logs', expiration: Duration.days(ACCESS_LOG_DAYS) }],
    });
    Validations.of(accessLogs).acknowledge({
      id: 'AwsSolutions-S1',
      reason:
        'This is the access-log bucket of the files bucket; logging access to it would only log the log deliveries',
    });

    const retentionDays = Number(settings.functionEnv.RETENTION_DAYS ?? 0);
    const uploadDays =
      retentionDays > 0 ? Math.min(settings.uploadExpirationDays, retentionDays + 1) : settings.uploadExpirationDays;
    if (settings.functionEnv.VECTOR_STORE === 's3vectors') {
      const name = `${settings.serviceName.toLowerCase().slice(0, 24)}-vectors-${this.account}-${this.region}`;
      const vectorBucket = new s3vectors.CfnVectorBucket(this, 'Vectors', { vectorBucketName: name });
      vectorBucket.applyRemovalPolicy(removalPolicy);
      this.vectorBucket = { name, arn: vectorBucket.attrVectorBucketArn };
    }

    const corsRule = bucketCorsRule(settings.corsAllowOrigin);
    this.bucket = new s3.Bucket(this, 'Files', {
      serverAccessLogsBucket: accessLogs,
      serverAccessLogsPrefix: 'files/',
      blockPublicAccess: s3.BlockPublicAccess.BLOCK_ALL,
      encryption: s3.BucketEncryption.S3_MANAGED,
      enforceSSL: true,
      objectOwnership: s3.ObjectOwnership.BUCKET_OWNER_ENFORCED,
      removalPolicy,
      lifecycleRules: [
        {
          id: 'abort-incomplete-multipart',
          abortIncompleteMultipartUploadAfter: Duration.days(settings.incompleteMultipartUploadDays),
        },
        // Uploads (ingested or abandoned) expire; the pipeline's own work files are deleted by
        // the pipeline, and the vectors it keeps live under another prefix (shared/files/storage.ts).
        { id: 'expire-uploads', prefix: UPLOADS_PREFIX, expiration: Duration.days(uploadDays) },
        // An account export lives a day (its job item too, by TTL).
        { id: 'expire-exports', prefix: EXPORTS_PREFIX, expiration: Duration.days(1) },
        { id: 'expire-stale-work-files', prefix: WORK_PREFIX, expiration: Duration.days(WORK_FILES_DAYS) },
        // With RETENTION_DAYS, the sweep deletes old files with their objects; a day later these
        // rules take whatever it missed (docs/DECISIONS.md "Erasure and retention").
        ...(retentionDays > 0
          ? [{ id: 'expire-retained-vectors', prefix: VECTORS_PREFIX, expiration: Duration.days(retentionDays + 1) }]
          : []),
      ],
      // Browsers PUT to and GET from presigned URLs directly (the same rule serves `npm start`).
      cors: [{ ...corsRule, allowedMethods: corsRule.allowedMethods.map((m) => s3.HttpMethods[m]) }],
    });

    this.jwtSecret = new secretsmanager.Secret(this, 'ServiceJwtSecret', {
      description: 'Signing key of the service JWT (HS256); rotating it signs everyone out',
      generateSecretString: { passwordLength: 64, excludePunctuation: true, includeSpace: false },
      removalPolicy,
    });
    Validations.of(this.jwtSecret).acknowledge({
      id: 'AwsSolutions-SMG4',
      reason:
        'Rotating the service JWT signing key invalidates every token at once (everyone signs in again); it is rotated by hand when needed, not on a schedule',
    });

    this.alarmTopic = new sns.Topic(this, 'Alarms', {
      displayName: `${settings.serviceName} alarms`,
      enforceSSL: true,
    });
    if (settings.alarmEmail) this.alarmTopic.addSubscription(new subscriptions.EmailSubscription(settings.alarmEmail));

    this.queues = {} as Record<PipelineStageName, PipelineQueue>;
    for (const stage of pipelineStageList) {
      // A DLQ holds the messages of files that failed for good: data, kept like the table.
      const dlq = new sqs.Queue(this, `${pascal(stage.queue)}Dlq`, {
        retentionPeriod: Duration.days(WORK_FILES_DAYS),
        encryption: sqs.QueueEncryption.SQS_MANAGED,
        enforceSSL: true,
        removalPolicy,
      });
      Validations.of(dlq).acknowledge({
        id: 'Serverless-SQSRedrivePolicy',
        reason:
          'A dead-letter queue: pdf-dead-letter consumes it and marks the file failed; a DLQ of the DLQ would only move the message again',
      });
      const queue = new sqs.Queue(this, `${pascal(stage.queue)}Queue`, {
        visibilityTimeout: Duration.seconds(visibilityTimeoutSeconds(stage)),
        deadLetterQueue: { queue: dlq, maxReceiveCount: stage.maxReceiveCount },
        encryption: sqs.QueueEncryption.SQS_MANAGED,
        enforceSSL: true,
      });
      this.queues[stage.name] = { queue, dlq };

      // A message in a DLQ is a stage that failed for good: someone should look. The dead-letter
      // consumer takes messages at once (they are rarely visible for long), so the alarm counts
      // the messages it received.
      const alarm = new cloudwatch.Alarm(this, `${pascal(stage.queue)}DlqAlarm`, {
        alarmDescription: `Messages in the ${stage.queue} dead-letter queue`,
        metric: dlq.metricNumberOfMessagesReceived({ period: Duration.minutes(1), statistic: 'Sum' }),
        threshold: 0,
        comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_THRESHOLD,
        evaluationPeriods: 1,
        treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
      });
      alarm.addAlarmAction(new cloudwatchActions.SnsAction(this.alarmTopic));
    }

    // --- Webhooks: the delivery function's queue. A message in its DLQ is an event or attempt
    // whose handling crashed on every receive (not a receiver that said no: those are retried
    // and recorded by the function itself); it is kept for a look and alarmed.
    const webhookDlq = new sqs.Queue(this, 'WebhookDeliveryDlq', {
      retentionPeriod: Duration.days(WORK_FILES_DAYS),
      encryption: sqs.QueueEncryption.SQS_MANAGED,
      enforceSSL: true,
      removalPolicy,
    });
    Validations.of(webhookDlq).acknowledge({
      id: 'Serverless-SQSRedrivePolicy',
      reason: 'The dead-letter queue of the webhook queue: a DLQ of the DLQ would only move the message again',
    });
    this.webhookQueue = {
      dlq: webhookDlq,
      queue: new sqs.Queue(this, 'WebhookDeliveryQueue', {
        visibilityTimeout: Duration.seconds(visibilityTimeoutSeconds(webhookDelivery)),
        deadLetterQueue: { queue: webhookDlq, maxReceiveCount: webhookDelivery.maxReceiveCount },
        encryption: sqs.QueueEncryption.SQS_MANAGED,
        enforceSSL: true,
      }),
    };
    new cloudwatch.Alarm(this, 'WebhookDeliveryDlqAlarm', {
      alarmDescription: 'Messages in the webhook-delivery dead-letter queue',
      metric: webhookDlq.metricApproximateNumberOfMessagesVisible({
        period: Duration.minutes(5),
        statistic: 'Maximum',
      }),
      threshold: 0,
      comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_THRESHOLD,
      evaluationPeriods: 1,
      treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
    }).addAlarmAction(new cloudwatchActions.SnsAction(this.alarmTopic));
    // --- end webhooks
  }
}

export const pascal = (name: string) =>
  name.replace(/(^|[-_/{}])(\w)/g, (_, __, c: string) => c.toUpperCase()).replace(/\W/g, '');
