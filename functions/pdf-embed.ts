import '#shared/config/ai.ts';
import { stageSettings } from '#shared/files/stages.ts';
import { aiProvider } from '#shared/ai/provider.ts';
import { estimateTokens } from '#shared/ai/tokens.ts';
import { config } from '#shared/config.ts';
import { systemClock } from '#shared/clock.ts';
import { embedMessageSchema } from '#shared/ingestion/queue-messages.ts';
import { runEmbed } from '#shared/ingestion/embed-stage.ts';
import { pipelineDeps } from '#shared/ingestion/pipeline-deps.ts';
import { stageHandler } from '#shared/ingestion/stage-handler.ts';
import { dynamo } from '#shared/clients.ts';
import { userLimits } from '#shared/limits/user-limits.ts';

// pdf-embed (SQS): one part's embeddings into chunk items and packed vectors; the last part completes the file.
const settings = config();
const deps = pipelineDeps(settings, systemClock);
const limits = userLimits(dynamo(), settings, systemClock);

export const handler = stageHandler(stageSettings('pdf-embed'), embedMessageSchema, deps, async (deps, msg) =>
  runEmbed(deps, msg, {
    provider: await aiProvider(),
    concurrency: settings.EMBEDDING_CONCURRENCY,
    estimateTokens,
    chargeTokens: (userId, tokens) => limits.chargeTokens(userId, tokens),
  }),
);
