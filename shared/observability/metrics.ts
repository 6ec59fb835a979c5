import { Metrics, MetricUnit } from '@aws-lambda-powertools/metrics';
import { SERVICE_NAME } from './service-name.ts';

// The service's CloudWatch metrics, every one of them here (the stack's dashboard reads the
// names below): Powertools Metrics in the embedded metric format (EMF), a JSON line on stdout
// that CloudWatch Logs turns into metrics, so no API call and no extra permission. Each record is
// a metric set written at once (not buffered until the invocation ends): a streamed
// reply's figures are known after its handler returned, and the pipeline's within a batch.
// Emitted only where the stack sets POWERTOOLS_METRICS_NAMESPACE (deployed functions); under
// npm start and in tests nothing is written unless it is set.

export { SERVICE_NAME };

export const METRIC = {
  /** Per HTTP request, dimension `route` ("GET /chat/{chatId}"): 1, and whether it answered 4xx / 5xx (0 or 1). */
  requests: 'Requests',
  clientErrors: 'ClientErrors',
  serverErrors: 'ServerErrors',
  /** Per reply of the model (whole or streamed): tokens in and out, its duration, and (streamed) the wait for the first text. */
  replyTokens: 'ReplyTokens',
  modelLatency: 'ModelLatency',
  timeToFirstToken: 'TimeToFirstToken',
  /** Per completed ingestion: embedding tokens, pages, from the run's start to completion. */
  ingestionTokens: 'IngestionTokens',
  ingestionPages: 'IngestionPages',
  ingestionDuration: 'IngestionDuration',
  /** Per failed ingestion, dimension `reason` (NOT_PDF, DOWNLOAD_FAILED, PROCESSING_FAILED, …). */
  ingestionFailures: 'IngestionFailures',
  /**
   * Per change of a reply's rating (docs/DECISIONS.md, Feedback on replies): 1 under the new
   * rating (up, down) or under removed; setting the rating it already has counts nothing.
   */
  feedbackUp: 'FeedbackUp',
  feedbackDown: 'FeedbackDown',
  feedbackRemoved: 'FeedbackRemoved',
} as const;

type Dimensions = Record<string, string>;
type Unit = (typeof MetricUnit)[keyof typeof MetricUnit];
type Values = [name: string, unit: Unit, value: number][];

export class ServiceMetrics {
  constructor(private readonly metrics: Metrics | undefined) {}

  /** One EMF line: these values under these dimensions (besides `service`). */
  private record(values: Values, dimensions: Dimensions = {}): void {
    if (!this.metrics) return;
    // Synchronous from first add to publish, so concurrent invocations cannot mix their sets.
    this.metrics.addDimensions(dimensions);
    for (const [name, unit, value] of values) this.metrics.addMetric(name, unit, value);
    this.metrics.publishStoredMetrics(); // writes the line and clears metrics and dimensions
  }

  response(route: string, statusCode: number): void {
    this.record(
      [
        [METRIC.requests, MetricUnit.Count, 1],
        [METRIC.clientErrors, MetricUnit.Count, statusCode >= 400 && statusCode < 500 ? 1 : 0],
        [METRIC.serverErrors, MetricUnit.Count, statusCode >= 500 ? 1 : 0],
      ],
      { route },
    );
  }

  reply(r: { tokens: number; latencyMs: number; firstTokenMs?: number }): void {
    this.record([
      [METRIC.replyTokens, MetricUnit.Count, r.tokens],
      [METRIC.modelLatency, MetricUnit.Milliseconds, r.latencyMs],
      ...(r.firstTokenMs !== undefined
        ? ([[METRIC.timeToFirstToken, MetricUnit.Milliseconds, r.firstTokenMs]] as Values)
        : []),
    ]);
  }

  ingestionCompleted(r: { tokens?: number; pages?: number; durationMs?: number }): void {
    this.record([
      ...(r.tokens !== undefined ? ([[METRIC.ingestionTokens, MetricUnit.Count, r.tokens]] as Values) : []),
      ...(r.pages !== undefined ? ([[METRIC.ingestionPages, MetricUnit.Count, r.pages]] as Values) : []),
      ...(r.durationMs !== undefined
        ? ([[METRIC.ingestionDuration, MetricUnit.Milliseconds, r.durationMs]] as Values)
        : []),
    ]);
  }

  /** A reply's rating went from `previous` to `next` (undefined: none); no change, no record. */
  feedbackChanged(previous: 'up' | 'down' | undefined, next: 'up' | 'down' | undefined): void {
    if (previous === next) return;
    const name = next === 'up' ? METRIC.feedbackUp : next === 'down' ? METRIC.feedbackDown : METRIC.feedbackRemoved;
    this.record([[name, MetricUnit.Count, 1]]);
  }

  ingestionFailed(reason: string): void {
    this.record([[METRIC.ingestionFailures, MetricUnit.Count, 1]], { reason });
  }
}

/** Powertools Metrics for a namespace (none: nothing is emitted). */
export function serviceMetrics(namespace: string | undefined): ServiceMetrics {
  return new ServiceMetrics(namespace ? new Metrics({ namespace, serviceName: SERVICE_NAME }) : undefined);
}

/** This process's metrics (read from the environment, like the logger's level). */
export const metrics = serviceMetrics(process.env.POWERTOOLS_METRICS_NAMESPACE || undefined);
