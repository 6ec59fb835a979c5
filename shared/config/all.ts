import * as z from '../zod.ts';
import { coreSettings, importedPieces, parseSettings } from './core.ts';
import { aiSettings } from './ai.ts';
import { authSettings } from './auth.ts';
import { chatSettings } from './chat.ts';
import { chunkingSettings } from './chunking.ts';
import { collectionSettings } from './collections.ts';
import { limitSettings } from './limits.ts';
import { paymentSettings } from './payments.ts';
import { pdfSettings } from './pdf.ts';
import { queueSettings } from './queues.ts';
import { retentionSettings } from './retention.ts';
import { retrievalSettings } from './retrieval.ts';
import { sharingSettings } from './sharing.ts';
import { uploadSettings } from './uploads.ts';
import { webhookSettings } from './webhooks.ts';

// The whole configuration: every piece of shared/config/, for what must know every setting (the
// stack's synth check and pass-through, the local runtime, tests). Functions never import it:
// each imports the pieces its code reads (shared/config.ts).

export { ConfigError } from './core.ts';
export { chosenProvider } from './ai.ts';

export const configSchema = z.object({
  ...coreSettings.shape,
  ...authSettings.shape,
  ...aiSettings.shape,
  ...paymentSettings.shape,
  ...chatSettings.shape,
  ...limitSettings.shape,
  ...queueSettings.shape,
  ...pdfSettings.shape,
  ...chunkingSettings.shape,
  ...uploadSettings.shape,
  ...retentionSettings.shape,
  ...retrievalSettings.shape,
  ...sharingSettings.shape,
  ...collectionSettings.shape,
  ...webhookSettings.shape,
});

export type Config = z.infer<typeof configSchema>;

/** Parses an environment with every piece; throws one ConfigError naming every bad variable. */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  return parseSettings(importedPieces(), env) as Config;
}
