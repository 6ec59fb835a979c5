import { CfnOutput, Duration, Stack, type StackProps } from 'aws-cdk-lib';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import * as cloudwatchActions from 'aws-cdk-lib/aws-cloudwatch-actions';
import type { Construct } from 'constructs';
import { METRIC, SERVICE_NAME } from '#shared/observability/metrics.ts';
import { httpRoutes, manifestFunctions } from '../routes.ts';
import { serviceFunctionName, type StackSettings } from '../settings.ts';
import { serviceDashboard } from '../dashboard.ts';
import { restApiName } from './api-stack.ts';
import { pascal, type StatefulStack } from './stateful-stack.ts';

// The alarms and the dashboard of the functions and the API. Metrics are named by dimensions
// (function names, the API's name: both fixed), so this stack imports nothing but the alarm topic
// (docs/DECISIONS.md "Stacks within CloudFormation's limits"). The DLQ alarms stay beside their
// queues in the stateful stack.

const PERIOD = Duration.minutes(5);

interface MonitoringStackProps extends StackProps {
  settings: StackSettings;
  stateful: StatefulStack;
}

export class MonitoringStack extends Stack {
  readonly dashboard: cloudwatch.Dashboard;
  /** The CloudWatch namespace of the functions' own metrics (shared/observability/metrics.ts). */
  readonly metricsNamespace: string;

  constructor(scope: Construct, id: string, props: MonitoringStackProps) {
    super(scope, id, props);
    const { settings, stateful } = props;
    const alarmAction = new cloudwatchActions.SnsAction(stateful.alarmTopic);
    this.metricsNamespace = settings.serviceName;
    const apiName = restApiName(settings.serviceName);
    const alarm = (alarmId: string, p: Omit<cloudwatch.AlarmProps, 'evaluationPeriods'>) =>
      new cloudwatch.Alarm(this, alarmId, {
        comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
        evaluationPeriods: 1,
        treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
        ...p,
      }).addAlarmAction(alarmAction);

    // One alarm per function, so the notification names the function that failed.
    for (const fn of manifestFunctions) {
      alarm(`${pascal(fn.name)}ErrorsAlarm`, {
        alarmDescription: `${fn.name} failed (errors, timeouts or crashes)`,
        metric: new cloudwatch.Metric({
          namespace: 'AWS/Lambda',
          metricName: 'Errors',
          dimensionsMap: { FunctionName: serviceFunctionName(settings.serviceName, fn.name) },
          period: PERIOD,
          statistic: 'Sum',
        }),
        threshold: 1,
      });
    }

    alarm('Api5xxAlarm', {
      alarmDescription: 'The API answered 5xx (function failures, timeouts, integration errors)',
      metric: new cloudwatch.Metric({
        namespace: 'AWS/ApiGateway',
        metricName: '5XXError',
        dimensionsMap: { ApiName: apiName },
        period: PERIOD,
        statistic: 'Sum',
      }),
      threshold: settings.api5xxAlarmThreshold,
    });
    // A refused webhook delivery is a wrong webhook secret (every payment stalls while the
    // provider retries) or someone forging events: either needs a person, and neither is a 5xx.
    const webhook = httpRoutes['payment-webhook'];
    alarm('PaymentWebhookRefusedAlarm', {
      alarmDescription: `${webhook.method} ${webhook.path} refused deliveries (4xx: a bad or stale signature, a wrong webhook secret)`,
      metric: new cloudwatch.Metric({
        namespace: this.metricsNamespace,
        metricName: METRIC.clientErrors,
        dimensionsMap: { service: SERVICE_NAME, route: `${webhook.method} ${webhook.path}` },
        period: PERIOD,
        statistic: 'Sum',
      }),
      threshold: 1,
    });

    this.dashboard = serviceDashboard(this, 'Dashboard', {
      namespace: this.metricsNamespace,
      dashboardName: settings.serviceName,
      apiName,
    });
    new CfnOutput(this, 'DashboardUrl', {
      description: 'The CloudWatch dashboard: requests and errors by route, model replies, ingestion',
      value: `https://console.aws.amazon.com/cloudwatch/home?region=${this.region}#dashboards:name=${this.dashboard.dashboardName}`,
    });
  }
}
