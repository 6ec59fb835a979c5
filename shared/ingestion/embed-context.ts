import '../config/ai.ts';
import { aiProvider } from '../ai/provider.ts';
import { estimateTokens } from '../ai/tokens.ts';
import { dynamo } from '../clients.ts';
import type { Clock } from '../clock.ts';
import type { Config } from '../config.ts';
import { userLimits } from '../limits/user-limits.ts';
import type { EmbedContext } from './embed-stage.ts';

/**
 * What embedding a part works with (pdf-embed, and pdf-extract for the parts it embeds itself):
 * the provider of this cold start, and the owner's token budget, charged as the provider answers.
 */
export function embedContext(config: Config, clock: Clock): () => Promise<EmbedContext> {
  const limits = userLimits(dynamo(), config, clock);
  return async () => ({
    provider: await aiProvider(),
    concurrency: config.EMBEDDING_CONCURRENCY,
    estimateTokens,
    chargeTokens: (userId, tokens) => limits.chargeTokens(userId, tokens),
  });
}
