import { Duration } from 'aws-cdk-lib';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import type { Construct } from 'constructs';
import { METRIC, SERVICE_NAME } from '#shared/observability/metrics.ts';

// The service's CloudWatch dashboard: the metrics the functions write in EMF (shared/observability/metrics.ts)
// under the stack's namespace, and the API's own. Per-route and per-reason series are SEARCH
// expressions, so a new route or failure reason appears without changing this file.

const PERIOD = Duration.minutes(5);

export function serviceDashboard(
  scope: Construct,
  id: string,
  p: { namespace: string; dashboardName: string; apiName: string },
): cloudwatch.Dashboard {
  const metric = (metricName: string, statistic: string, label?: string) =>
    new cloudwatch.Metric({
      namespace: p.namespace,
      metricName,
      dimensionsMap: { service: SERVICE_NAME },
      statistic,
      period: PERIOD,
      ...(label && { label }),
    });
  const search = (metricName: string, dimension: string, statistic: string, label: string) =>
    new cloudwatch.MathExpression({
      expression: `SEARCH('{${p.namespace},service,${dimension}} MetricName="${metricName}" service="${SERVICE_NAME}"', '${statistic}', ${PERIOD.toSeconds()})`,
      usingMetrics: {},
      label,
      period: PERIOD,
    });
  const api = (metricName: string, statistic: string, label: string) =>
    new cloudwatch.Metric({
      namespace: 'AWS/ApiGateway',
      metricName,
      dimensionsMap: { ApiName: p.apiName },
      statistic,
      period: PERIOD,
      label,
    });
  const graph = (title: string, left: cloudwatch.IMetric[], leftYAxis?: cloudwatch.YAxisProps) =>
    new cloudwatch.GraphWidget({ title, left, width: 8, height: 6, ...(leftYAxis && { leftYAxis }) });
  const ms = { label: 'ms', showUnits: false, min: 0 };
  /** A duration's median and 90th percentile, in ms. */
  const percentiles = (title: string, metricName: string) =>
    graph(`${title} (p50, p90)`, [metric(metricName, 'p50', 'p50'), metric(metricName, 'p90', 'p90')], ms);

  const dashboard = new cloudwatch.Dashboard(scope, id, {
    dashboardName: p.dashboardName,
    defaultInterval: Duration.hours(3),
  });
  dashboard.addWidgets(
    new cloudwatch.TextWidget({
      markdown: `## ${p.dashboardName}\nRequests and errors by route; the model's replies and their users' ratings; PDF ingestion. 5-minute periods; metrics in namespace \`${p.namespace}\` (shared/observability/metrics.ts).`,
      width: 24,
      height: 2,
    }),
  );
  dashboard.addWidgets(
    graph('API: requests, 4xx, 5xx (API Gateway)', [
      api('Count', 'Sum', 'requests'),
      api('4XXError', 'Sum', '4xx'),
      api('5XXError', 'Sum', '5xx'),
    ]),
    graph('4xx by route', [search(METRIC.clientErrors, 'route', 'Sum', '')]),
    graph('5xx by route', [search(METRIC.serverErrors, 'route', 'Sum', '')]),
  );
  dashboard.addWidgets(
    percentiles('Model latency per reply', METRIC.modelLatency),
    percentiles('Time to first token, streamed', METRIC.timeToFirstToken),
    graph('Tokens per reply (average, max) and replies', [
      metric(METRIC.replyTokens, 'Average', 'average'),
      metric(METRIC.replyTokens, 'Maximum', 'max'),
      metric(METRIC.replyTokens, 'SampleCount', 'replies'),
    ]),
  );
  // Counts of rating changes (shared/observability/metrics.ts): a reply rated up, then down, counts once in each.
  dashboard.addWidgets(
    graph('Feedback on replies: ratings set and removed (sum)', [
      metric(METRIC.feedbackUp, 'Sum', 'up'),
      metric(METRIC.feedbackDown, 'Sum', 'down'),
      metric(METRIC.feedbackRemoved, 'Sum', 'removed'),
    ]),
  );
  dashboard.addWidgets(
    percentiles('Ingestion duration, upload or URL to completed', METRIC.ingestionDuration),
    graph('Pages and embedding tokens ingested (sum)', [
      metric(METRIC.ingestionPages, 'Sum', 'pages'),
      metric(METRIC.ingestionTokens, 'Sum', 'tokens'),
    ]),
    graph('Ingestion failures by reason', [search(METRIC.ingestionFailures, 'reason', 'Sum', '')]),
  );
  return dashboard;
}
