import { dynamo, tableName } from '../../clients.ts';
import type { Clock } from '../../clock.ts';
import { metrics } from '../../observability/metrics.ts';
import { chatRepositories } from '../repositories.ts';
import { FeedbackRepository } from './feedback-repository.ts';
import type { FeedbackDeps } from './feedback-service.ts';

/** What rating a reply and taking the rating back work with (PUT and DELETE …/feedback). */
export const feedbackDeps = (clock: Clock): FeedbackDeps => ({
  ...chatRepositories(dynamo(), tableName()),
  feedback: new FeedbackRepository(dynamo(), tableName()),
  clock,
  metrics,
});
