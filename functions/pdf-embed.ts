import { stageSettings } from '#infra/routes.ts';
import { aiProvider } from '#shared/ai/provider.ts';
import { estimateTokens } from '#shared/ai/tokens.ts';
import { config } from '#shared/config.ts';
import { systemClock } from '#shared/clock.ts';
import { embedMessageSchema } from '#shared/pdf/messages.ts';
import { runEmbed } from '#shared/pdf/embed-stage.ts';
import { stageHandler } from '#shared/pdf/stage-runner.ts';
import { dynamo, tableName } from '#shared/clients.ts';
import { limitSettings, UserLimits } from '#shared/limits/user-limits.ts';
import { UsageCounters } from '#shared/limits/usage-counters.ts';

// pdf-embed (SQS): one part's embeddings into chunk items and packed vectors; the last part completes the file.
const limits = new UserLimits(new UsageCounters(dynamo(), tableName()), limitSettings(config()), systemClock);

export const handler = stageHandler(stageSettings('pdf-embed'), embedMessageSchema, async (deps, msg) =>
  runEmbed(deps, msg, {
    provider: await aiProvider(),
    concurrency: config().EMBEDDING_CONCURRENCY,
    estimateTokens,
    chargeTokens: (userId, tokens) => limits.chargeTokens(userId, tokens),
  }),
);
