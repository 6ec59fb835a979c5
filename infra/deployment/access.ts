import type { BucketPrefix } from '#shared/files/storage.ts';
import type { PipelineStageName } from '#shared/files/stages.ts';

// What a deployed function gets: the resources it may touch, and its limits. The route or stage
// it serves says what it is (shared/<domain>/routes.ts, shared/files/stages.ts).

export type { BucketPrefix };

/** What a function's code does with each resource; the stack grants exactly this (least privilege). */
export interface Access {
  table?: 'read' | 'write' | 'readwrite';
  /**
   * Objects the function reads and writes (writes include deletes), by key prefix
   * (shared/files/storage.ts lays the keys out). A presigned URL carries its signer's rights, so
   * presigning an upload is writing it.
   */
  bucket?: { read?: BucketPrefix[]; write?: BucketPrefix[] };
  /** Queues (by stage name) the function sends to. */
  sendTo?: PipelineStageName[];
  /**
   * With VECTOR_STORE=s3vectors (docs/DECISIONS.md "Vector store: two backends"), what the function
   * does in the vector bucket's indexes: `write` (puts and deletes a run's vectors, makes the
   * user's index), `query` (searches them), `delete` (deletes a file's). Writing and deleting read
   * the file's lexical objects (work/, vectors/), which list the vectors' keys.
   */
  vectors?: ('write' | 'query' | 'delete')[];
  /** Reads the service JWT signing secret. */
  jwtSecret?: boolean;
  /**
   * Takes API keys (set from the route's `keyScope`): checking one records its use, so a function
   * whose table access is read-only may still write `lastUsedAt` on `APIKEY#` items (and nothing else).
   */
  apiKeys?: boolean;
  /** Calls the payment provider or checks its webhooks: reads its keys (the payments secret). */
  payments?: boolean;
  /**
   * What the function asks of the AI provider. The stack grants what the chosen provider needs
   * for it: the OpenAI key secret, or Bedrock's invoke rights on exactly the configured models.
   */
  ai?: AiUse[];
  /**
   * Sends to the webhook queue (WEBHOOK_QUEUE_URL): service events (file.completed, …) where they
   * happen, a ping, or the delivery function's next attempts (docs/DECISIONS.md "Webhooks").
   */
  events?: boolean;
}

/**
 * `chat`: replies (Converse / chat completions); `embeddings`: embedding requests; `rerank`: the
 * rerank stage of retrieval (Bedrock's Rerank API when RERANK_PROVIDER=bedrock).
 */
export type AiUse = 'chat' | 'embeddings' | 'rerank';

/**
 * The /tmp of a function that copies a PDF there for the pdf.js child (shared/ingestion/local-copy.ts,
 * docs/DECISIONS.md, Large PDFs): the largest PDF (PDF_MAX_BYTES is at most 500 MB) and room for
 * the rest (one invocation at a time per instance, one copy each).
 */
export const PDF_COPY_TMP_MB = 1024;
