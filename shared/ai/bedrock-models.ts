// What the service knows about Bedrock model ids, without the SDK: the embedding models' request
// limits and output sizes (for the provider) and the IAM resources a model id stands for (for the
// stack). Kept apart from bedrock-provider.ts so the stack and the provider's description never
// load the Bedrock client.

export type BedrockEmbeddingModel =
  | 'amazon.titan-embed-text-v2:0'
  | 'cohere.embed-english-v3'
  | 'cohere.embed-multilingual-v3';

interface EmbeddingModelSpec {
  family: 'titan-v2' | 'cohere-v3';
  dimensions: number;
  /** Texts per InvokeModel request. */
  textsPerRequest: number;
  /** The longest text the model accepts, in characters (longer ones are cut to it). */
  maxChars: number;
}

/** Cohere Embed v3 on Bedrock: at most 96 texts per request, each at most 2048 characters. */
const COHERE_MAX_TEXTS = 96;
const COHERE_MAX_CHARS = 2048;
/** Titan V2: one text per request, at most 50,000 characters (and 8,192 tokens). */
const TITAN_MAX_CHARS = 50_000;

export function embeddingModelSpec(model: BedrockEmbeddingModel, dimensions?: number): EmbeddingModelSpec {
  if (model.startsWith('cohere.'))
    return { family: 'cohere-v3', dimensions: 1024, textsPerRequest: COHERE_MAX_TEXTS, maxChars: COHERE_MAX_CHARS };
  return { family: 'titan-v2', dimensions: dimensions ?? 1024, textsPerRequest: 1, maxChars: TITAN_MAX_CHARS };
}

/**
 * Prefixes of the system-defined cross-region inference profiles (`us.amazon.nova-lite-v1:0`
 * routes to the US regions, `global.` to any commercial region). A model id without one of these
 * is a foundation model.
 */
const PROFILE_GEOGRAPHIES = ['us', 'us-gov', 'eu', 'apac', 'jp', 'au', 'ca', 'global'];

export interface ModelResources {
  /** ARNs the function calls directly (the model, or the inference profile). */
  invoked: string[];
  /**
   * Foundation models an inference profile routes to. Each may be called only through that
   * profile (condition `bedrock:InferenceProfileArn`), in whichever region it sends the request.
   */
  throughProfile?: { profileArn: string; foundationModelArns: string[] };
}

/**
 * The IAM resources behind a configured model id (BEDROCK_CHAT_MODEL or BEDROCK_EMBEDDING_MODEL):
 * - a foundation model id → `arn:aws:bedrock:<region>::foundation-model/<id>`;
 * - a system-defined inference profile id (`us.…`) → the profile ARN in this region and account,
 *   plus the foundation model in every region (`*`) but only through that profile;
 * - an ARN → itself; an application inference profile ARN → itself plus any foundation model
 *   through it (its model is not in its name).
 */
export function modelResources(modelId: string, region: string, account: string, partition = 'aws'): ModelResources {
  if (modelId.startsWith('arn:')) {
    const resource = modelId.split(':').slice(5).join(':');
    if (resource.startsWith('foundation-model/')) return { invoked: [modelId] };
    const profileId = resource.split('/').slice(1).join('/');
    const base = resource.startsWith('inference-profile/') ? foundationModelOfProfile(profileId) : undefined;
    return {
      invoked: [modelId],
      throughProfile: {
        profileArn: modelId,
        foundationModelArns: [`arn:${partition}:bedrock:*::foundation-model/${base ?? '*'}`],
      },
    };
  }
  const base = foundationModelOfProfile(modelId);
  if (!base) return { invoked: [`arn:${partition}:bedrock:${region}::foundation-model/${modelId}`] };
  const profileArn = `arn:${partition}:bedrock:${region}:${account}:inference-profile/${modelId}`;
  return {
    invoked: [profileArn],
    throughProfile: { profileArn, foundationModelArns: [`arn:${partition}:bedrock:*::foundation-model/${base}`] },
  };
}

/** `us.anthropic.claude-3-5-haiku-20241022-v1:0` → `anthropic.claude-3-5-haiku-20241022-v1:0`; undefined for a foundation model id. */
export function foundationModelOfProfile(modelId: string): string | undefined {
  const dot = modelId.indexOf('.');
  if (dot < 0) return undefined;
  return PROFILE_GEOGRAPHIES.includes(modelId.slice(0, dot)) ? modelId.slice(dot + 1) : undefined;
}
