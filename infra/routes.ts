// The route manifest: every HTTP route and every pipeline stage, with what each function may
// touch. The CDK stack, the esbuild build and the local runtime are all generated from it, so
// they cannot drift apart. A function's entry file is always functions/<name>.ts.

import type { AuthMode, HttpMethod, HttpRouteSettings } from '#shared/http/route.ts';
import type { BucketPrefix } from '#shared/files/storage.ts';
import { queueUrlSetting, type PipelineStageName, type StageSettings } from '#shared/files/stages.ts';

export type { PipelineStageName };
/** The environment variable holding each stage's queue URL, e.g. PDF_FETCH_QUEUE_URL. */
export { queueUrlSetting };

export type { AuthMode, HttpMethod };

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

export type { BucketPrefix };

/**
 * `chat`: replies (Converse / chat completions); `embeddings`: embedding requests; `rerank`: the
 * rerank stage of retrieval (Bedrock's Rerank API when RERANK_PROVIDER=bedrock).
 */
export type AiUse = 'chat' | 'embeddings' | 'rerank';

export interface HttpRoute extends HttpRouteSettings {
  timeoutSeconds?: number;
  memoryMb?: number;
  /** The function's /tmp (MB); Lambda's 512 unless set. */
  tmpMb?: number;
  access: Access;
}

interface PipelineStage {
  /** SQS queue feeding this stage; each has a dead-letter queue `<queue>-dlq`. */
  queue: string;
  batchSize: number;
  /** Concurrent batches (Lambda maximum concurrency of the event source mapping). */
  maxConcurrency: number;
  timeoutSeconds: number;
  memoryMb: number;
  /** The function's /tmp (MB); Lambda's 512 unless set. */
  tmpMb?: number;
  /** Receives before a message moves to the DLQ. */
  maxReceiveCount: number;
  access: Access;
}

/**
 * The /tmp of a function that copies a PDF there for the pdf.js child (shared/ingestion/local-copy.ts,
 * docs/DECISIONS.md, Large PDFs): the largest PDF (PDF_MAX_BYTES is at most 500 MB) and room for
 * the rest (one invocation at a time per instance, one copy each).
 */
export const PDF_COPY_TMP_MB = 1024;

export const pipelineStages = {
  'pdf-fetch': {
    queue: 'pdf-fetch',
    batchSize: 1,
    maxConcurrency: 4,
    timeoutSeconds: 120,
    memoryMb: 512,
    maxReceiveCount: 5,
    // Writes a run's source PDF; a stale run's clean-up deletes its work files and vectors.
    // Every stage that can end a run sends its owner's next waiting run to pdf-fetch
    // (docs/DECISIONS.md "Fair bulk ingestion").
    access: {
      table: 'readwrite',
      bucket: { write: ['work/', 'vectors/'] },
      sendTo: ['pdf-extract', 'pdf-fetch'],
      vectors: ['write'],
      events: true,
    },
  },
  'pdf-extract': {
    queue: 'pdf-extract',
    batchSize: 1,
    // A 2,000-page document is read in 8 ranges at once (PDF_EXTRACT_PAGES_PER_RANGE 256).
    maxConcurrency: 8,
    timeoutSeconds: 300,
    memoryMb: 1536,
    tmpMb: PDF_COPY_TMP_MB,
    maxReceiveCount: 5,
    access: {
      table: 'readwrite',
      bucket: { read: ['work/'], write: ['work/', 'vectors/'] },
      sendTo: ['pdf-extract', 'pdf-ocr', 'pdf-embed', 'pdf-fetch'],
      vectors: ['write'],
      events: true,
    },
  },
  // OCR of pages without usable text, a range of pages per message (OCR_PAGES_PER_MESSAGE), so a
  // long scan is recognised by up to maxConcurrency invocations at once, each with a tesseract
  // worker thread per vCPU (3008 MB is 2 vCPUs). The last range to finish chunks the recognised
  // text and queues its parts to pdf-embed.
  'pdf-ocr': {
    queue: 'pdf-ocr',
    batchSize: 1,
    maxConcurrency: 10,
    timeoutSeconds: 600,
    memoryMb: 3008,
    tmpMb: PDF_COPY_TMP_MB,
    maxReceiveCount: 5,
    access: {
      table: 'readwrite',
      bucket: { read: ['work/'], write: ['work/', 'vectors/'] },
      sendTo: ['pdf-embed', 'pdf-fetch'],
      vectors: ['write'],
      events: true,
    },
  },
  'pdf-embed': {
    queue: 'pdf-embed',
    batchSize: 1,
    maxConcurrency: 8,
    timeoutSeconds: 300,
    memoryMb: 1024,
    maxReceiveCount: 5,
    // Completion packs the parts' vectors (work/) into vectors/.
    access: {
      table: 'readwrite',
      bucket: { read: ['work/'], write: ['work/', 'vectors/'] },
      ai: ['embeddings'],
      sendTo: ['pdf-fetch'],
      vectors: ['write'],
      events: true,
    },
  },
} as const satisfies Record<PipelineStageName, PipelineStage>;

/**
 * A consumer of the pipeline's dead-letter queues (its event sources are every stage's DLQ). A
 * message lands there when its stage failed on every attempt, including ways in which no code of
 * the stage ran to record it (out of memory, timeout, crash); the consumer marks the file failed
 * (PROCESSING_FAILED, naming the stage), so no file stays `processing`.
 */
interface DeadLetterConsumer {
  batchSize: number;
  timeoutSeconds: number;
  memoryMb: number;
  access: Access;
}

const deadLetterConsumers = {
  'pdf-dead-letter': {
    batchSize: 10,
    timeoutSeconds: 30,
    memoryMb: 256,
    access: { table: 'readwrite', sendTo: ['pdf-fetch'], events: true },
  },
} as const satisfies Record<string, DeadLetterConsumer>;

// --- Webhooks: the delivery function, fed by the webhook queue (its DLQ: `<queue>-dlq`). Each
// message is an event to fan out or one attempt (WEBHOOK_TIMEOUT_MS at most, under the timeout);
// a failed attempt queues the next itself, so SQS's receives only cover crashes.
interface QueueConsumer {
  queue: string;
  batchSize: number;
  maxConcurrency: number;
  timeoutSeconds: number;
  memoryMb: number;
  maxReceiveCount: number;
  access: Access;
}

export const webhookDelivery = {
  name: 'webhook-delivery',
  entry: 'functions/webhook-delivery.ts',
  queue: 'webhook-delivery',
  batchSize: 1,
  maxConcurrency: 10,
  timeoutSeconds: 30,
  memoryMb: 256,
  maxReceiveCount: 5,
  access: { table: 'readwrite', events: true },
} as const satisfies QueueConsumer & { name: string; entry: string };
// --- end webhooks

interface ScheduledTask {
  /** Minutes between two runs (an EventBridge schedule; `npm start` uses SWEEP_INTERVAL_SECONDS). */
  everyMinutes: number;
  timeoutSeconds: number;
  memoryMb: number;
  access: Access;
}

const scheduledTasks = {
  // Finishes erasures (DELETE /me), builds account exports (reads uploads/, writes exports/) and
  // applies RETENTION_DAYS (shared/erasure/sweep.ts): every two minutes, so an erasure the request
  // could not finish is done within five.
  'data-sweep': {
    everyMinutes: 2,
    timeoutSeconds: 110,
    memoryMb: 512,
    access: {
      table: 'readwrite',
      bucket: { read: ['uploads/'], write: ['uploads/', 'work/', 'vectors/', 'exports/'] },
      sendTo: ['pdf-fetch'],
      vectors: ['delete'],
      events: true,
    },
  },
} as const satisfies Record<string, ScheduledTask>;

export const httpRoutes = {
  'sign-in': {
    method: 'POST',
    path: '/auth',
    auth: 'idp',
    shape: 'envelope',
    access: { table: 'readwrite', jwtSecret: true },
  },
  // The signed-in user and their usage, read from their counters.
  'get-me': {
    method: 'GET',
    path: '/me',
    auth: 'user',
    shape: 'envelope',
    keyScope: 'read',
    access: { table: 'read', jwtSecret: true },
  },
  // Erases the caller and everything of theirs (shared/erasure/erasure.ts): the deletes of the
  // file and chat routes, for every file and chat, within the function's time; the sweep finishes.
  'delete-me': {
    method: 'DELETE',
    path: '/me',
    auth: 'user',
    shape: 'envelope',
    access: {
      table: 'readwrite',
      bucket: { write: ['uploads/', 'work/', 'vectors/', 'exports/'] },
      jwtSecret: true,
      vectors: ['delete'],
    },
  },
  // An account export (shared/account-export/): POST records a job the data sweep builds into
  // exports/; GET presigns the ZIP once built, hence its read of exports/ and nothing else.
  'create-export': {
    method: 'POST',
    path: '/me/export',
    auth: 'user',
    shape: 'envelope',
    access: { table: 'readwrite', jwtSecret: true },
  },
  'get-export': {
    method: 'GET',
    path: '/me/export/{exportId}',
    auth: 'user',
    shape: 'envelope',
    access: { table: 'read', bucket: { read: ['exports/'] }, jwtSecret: true },
  },
  // --- Programs: API keys and the OpenAI-compatible API (docs/DECISIONS.md "API keys", "OpenAI-compatible API").
  // Keys are managed with a service token only (no keyScope: a key cannot manage keys).
  'create-api-key': {
    method: 'POST',
    path: '/me/api-keys',
    auth: 'user',
    shape: 'envelope',
    access: { table: 'readwrite', jwtSecret: true },
  },
  'list-api-keys': {
    method: 'GET',
    path: '/me/api-keys',
    auth: 'user',
    shape: 'envelope',
    access: { table: 'read', jwtSecret: true },
  },
  'revoke-api-key': {
    method: 'DELETE',
    path: '/me/api-keys/{id}',
    auth: 'user',
    shape: 'envelope',
    access: { table: 'readwrite', jwtSecret: true },
  },
  // OpenAI's chat completions over the caller's documents, answered by the reply machinery of
  // send-message (shared/completions/), in OpenAI's bodies, chunks and errors.
  'openai-list-models': {
    method: 'GET',
    path: '/openai/models',
    auth: 'user',
    shape: 'openai',
    keyScope: 'read',
    access: { table: 'read', jwtSecret: true },
  },
  'openai-chat-completions': {
    method: 'POST',
    path: '/openai/chat/completions',
    auth: 'user',
    shape: 'openai',
    keyScope: 'chat',
    streaming: true,
    rateLimit: 'messages',
    timeoutSeconds: 300,
    access: {
      table: 'readwrite',
      bucket: { read: ['vectors/'] },
      jwtSecret: true,
      ai: ['chat', 'embeddings'],
      vectors: ['query'],
    },
  },
  // --- end of programs
  // Chats and messages (envelope bodies). send-message streams (Lambda response streaming) and
  // may wait on a long reply, hence its timeout; it calls the model, and embeds the prompt in a file chat.
  'create-chat': {
    method: 'POST',
    path: '/chat',
    auth: 'user',
    shape: 'envelope',
    keyScope: 'chat',
    access: { table: 'readwrite', jwtSecret: true },
  },
  'list-chats': {
    method: 'GET',
    path: '/chat',
    auth: 'user',
    shape: 'envelope',
    keyScope: 'read',
    access: { table: 'read', jwtSecret: true },
  },
  'get-chat': {
    method: 'GET',
    path: '/chat/{chatId}',
    auth: 'user',
    shape: 'envelope',
    keyScope: 'read',
    access: { table: 'read', jwtSecret: true },
  },
  'update-chat': {
    method: 'PUT',
    path: '/chat/{chatId}',
    auth: 'user',
    shape: 'envelope',
    keyScope: 'chat',
    access: { table: 'readwrite', jwtSecret: true },
  },
  'delete-chat': {
    method: 'DELETE',
    path: '/chat/{chatId}',
    auth: 'user',
    shape: 'envelope',
    keyScope: 'chat',
    access: { table: 'readwrite', jwtSecret: true },
  },
  // A literal segment beside {chatId}: API Gateway and the local gateway match it first, wherever it
  // stands in this list.
  'search-chats': {
    method: 'GET',
    path: '/chat/search',
    auth: 'user',
    shape: 'envelope',
    keyScope: 'read',
    access: { table: 'read', jwtSecret: true },
  },
  'list-messages': {
    method: 'GET',
    path: '/chat/{chatId}/messages',
    auth: 'user',
    shape: 'envelope',
    keyScope: 'read',
    access: { table: 'read', jwtSecret: true },
  },
  'send-message': {
    method: 'POST',
    path: '/message/logged-in',
    auth: 'user',
    shape: 'envelope',
    keyScope: 'chat',
    streaming: true,
    rateLimit: 'messages',
    timeoutSeconds: 300,
    access: {
      table: 'readwrite',
      bucket: { read: ['vectors/'] },
      jwtSecret: true,
      ai: ['chat', 'embeddings', 'rerank'],
      vectors: ['query'],
    },
  },
  // A new reply to a stored prompt (a sibling of the one regenerated): what send-message does, but the prompt.
  'regenerate-reply': {
    method: 'POST',
    path: '/chat/{chatId}/messages/{messageId}/regenerate',
    auth: 'user',
    shape: 'envelope',
    keyScope: 'chat',
    streaming: true,
    rateLimit: 'messages',
    timeoutSeconds: 300,
    access: {
      table: 'readwrite',
      bucket: { read: ['vectors/'] },
      jwtSecret: true,
      ai: ['chat', 'embeddings', 'rerank'],
      vectors: ['query'],
    },
  },
  // A streamed reply outlives its connection: resumed from the table (streaming, as long as a
  // reply may take; its streams open at once are limited per reply and per user), or stopped
  // wherever it is generated.
  'follow-reply': {
    method: 'GET',
    path: '/chat/{chatId}/messages/{messageId}/stream',
    auth: 'user',
    shape: 'envelope',
    keyScope: 'read',
    streaming: true,
    rateLimit: 'follows',
    timeoutSeconds: 300,
    access: { table: 'readwrite', jwtSecret: true },
  },
  'stop-reply': {
    method: 'POST',
    path: '/chat/{chatId}/messages/{messageId}/stop',
    auth: 'user',
    shape: 'envelope',
    keyScope: 'chat',
    access: { table: 'readwrite', jwtSecret: true },
  },
  // The owner's rating of an ai reply: set (replacing any) or removed.
  'put-feedback': {
    method: 'PUT',
    path: '/chat/{chatId}/messages/{messageId}/feedback',
    auth: 'user',
    shape: 'envelope',
    keyScope: 'chat',
    access: { table: 'readwrite', jwtSecret: true },
  },
  'delete-feedback': {
    method: 'DELETE',
    path: '/chat/{chatId}/messages/{messageId}/feedback',
    auth: 'user',
    shape: 'envelope',
    keyScope: 'chat',
    access: { table: 'readwrite', jwtSecret: true },
  },
  // Export and share (docs/DECISIONS.md, Export and share). The export is a file, streamed as it
  // is written (no 6 MB buffered-payload cap); its errors are envelopes. A shared chat is read
  // without a sign-in: `public`, limited per source IP, and throttled at the stage (stack).
  'export-chat': {
    method: 'GET',
    path: '/chat/{chatId}/export',
    auth: 'user',
    shape: 'envelope',
    keyScope: 'read',
    streaming: true,
    timeoutSeconds: 60,
    access: { table: 'read', jwtSecret: true },
  },
  'share-chat': {
    method: 'POST',
    path: '/chat/{chatId}/share',
    auth: 'user',
    shape: 'envelope',
    access: { table: 'readwrite', jwtSecret: true },
  },
  'revoke-share': {
    method: 'DELETE',
    path: '/chat/{chatId}/share',
    auth: 'user',
    shape: 'envelope',
    access: { table: 'readwrite', jwtSecret: true },
  },
  'get-shared-chat': {
    method: 'GET',
    path: '/shared/{shareId}',
    auth: 'public',
    shape: 'envelope',
    rateLimit: 'sharedReads',
    access: { table: 'readwrite' },
  },
  // PDF upload and ingestion (envelope bodies). ingest-pdf checks the URL and its size, starts the
  // pipeline and waits up to PDF_SYNC_WAIT_MS for it (under API Gateway's 29 s).
  'create-upload': {
    method: 'POST',
    path: '/upload',
    auth: 'user',
    shape: 'envelope',
    keyScope: 'files',
    rateLimit: 'uploads',
    access: { table: 'readwrite', bucket: { read: ['uploads/'], write: ['uploads/'] }, jwtSecret: true },
  },
  // Large PDFs: an S3 multipart upload, a presigned PUT per part, completed with the parts' ETags.
  'create-multipart-upload': {
    method: 'POST',
    path: '/upload/multipart',
    auth: 'user',
    shape: 'envelope',
    keyScope: 'files',
    rateLimit: 'uploads',
    access: { table: 'readwrite', bucket: { read: ['uploads/'], write: ['uploads/'] }, jwtSecret: true },
  },
  'complete-multipart-upload': {
    method: 'POST',
    path: '/upload/{fileId}/complete',
    auth: 'user',
    shape: 'envelope',
    keyScope: 'files',
    access: { table: 'readwrite', bucket: { write: ['uploads/'] }, jwtSecret: true },
  },
  'list-uploads': {
    method: 'GET',
    path: '/upload',
    auth: 'user',
    shape: 'envelope',
    keyScope: 'read',
    access: { table: 'read', jwtSecret: true },
  },
  'delete-upload': {
    method: 'DELETE',
    path: '/upload/{fileId}',
    auth: 'user',
    shape: 'envelope',
    keyScope: 'files',
    access: {
      table: 'readwrite',
      bucket: { write: ['uploads/', 'work/', 'vectors/'] },
      sendTo: ['pdf-fetch'],
      jwtSecret: true,
      vectors: ['delete'],
    },
  },
  'ingest-pdf': {
    method: 'POST',
    path: '/message/pdf',
    auth: 'user',
    shape: 'envelope',
    keyScope: 'files',
    rateLimit: 'ingestions',
    access: { table: 'readwrite', sendTo: ['pdf-fetch'], jwtSecret: true },
  },
  'get-pdf-status': {
    method: 'GET',
    path: '/message/pdf/{fileId}',
    auth: 'user',
    shape: 'envelope',
    keyScope: 'read',
    access: { table: 'read', jwtSecret: true },
  },
  // Collections of files (shared/collections/): the table only; a delete leaves the files.
  'create-collection': {
    method: 'POST',
    path: '/collections',
    auth: 'user',
    shape: 'envelope',
    keyScope: 'files',
    access: { table: 'readwrite', jwtSecret: true },
  },
  'list-collections': {
    method: 'GET',
    path: '/collections',
    auth: 'user',
    shape: 'envelope',
    keyScope: 'read',
    access: { table: 'read', jwtSecret: true },
  },
  'get-collection': {
    method: 'GET',
    path: '/collections/{id}',
    auth: 'user',
    shape: 'envelope',
    keyScope: 'read',
    access: { table: 'read', jwtSecret: true },
  },
  'update-collection': {
    method: 'PUT',
    path: '/collections/{id}',
    auth: 'user',
    shape: 'envelope',
    keyScope: 'files',
    access: { table: 'readwrite', jwtSecret: true },
  },
  'delete-collection': {
    method: 'DELETE',
    path: '/collections/{id}',
    auth: 'user',
    shape: 'envelope',
    keyScope: 'files',
    access: { table: 'readwrite', jwtSecret: true },
  },
  'add-collection-file': {
    method: 'PUT',
    path: '/collections/{id}/files/{fileId}',
    auth: 'user',
    shape: 'envelope',
    keyScope: 'files',
    access: { table: 'readwrite', jwtSecret: true },
  },
  'remove-collection-file': {
    method: 'DELETE',
    path: '/collections/{id}/files/{fileId}',
    auth: 'user',
    shape: 'envelope',
    keyScope: 'files',
    access: { table: 'readwrite', jwtSecret: true },
  },
  'list-collection-files': {
    method: 'GET',
    path: '/collections/{id}/files',
    auth: 'user',
    shape: 'envelope',
    keyScope: 'read',
    access: { table: 'read', jwtSecret: true },
  },
  // Passages across the caller's completed files (shared/retrieval/search.ts): the query is
  // embedded (charged to the token budget, hence the writes, and counted as a message), the packed
  // vectors read as a file chat's retrieval reads them.
  'search-files': {
    method: 'POST',
    path: '/search',
    auth: 'user',
    shape: 'envelope',
    keyScope: 'search',
    rateLimit: 'messages',
    access: {
      table: 'readwrite',
      bucket: { read: ['vectors/'] },
      jwtSecret: true,
      ai: ['embeddings', 'rerank'],
      vectors: ['query'],
    },
  },
  // A page's text (written at ingestion) and its image, drawn on the first request by the bounded
  // pdf.js child from the run's source PDF and kept beside the file's vectors.
  'get-pdf-page': {
    method: 'GET',
    path: '/message/pdf/{fileId}/pages/{page}',
    auth: 'user',
    shape: 'envelope',
    keyScope: 'read',
    rateLimit: 'pages',
    timeoutSeconds: 60,
    // As pdf-ocr's: the page a citation points at may be a book's cover, one 93 M pixel photograph.
    memoryMb: 3008,
    tmpMb: PDF_COPY_TMP_MB,
    access: { table: 'read', bucket: { read: ['vectors/'], write: ['vectors/'] }, jwtSecret: true },
  },
  // A part of a file of any format (its place and text); a PDF's page is drawn as the page route's.
  'get-file-part': {
    method: 'GET',
    path: '/files/{fileId}/parts/{part}',
    auth: 'user',
    shape: 'envelope',
    rateLimit: 'pages',
    timeoutSeconds: 60,
    memoryMb: 3008,
    tmpMb: PDF_COPY_TMP_MB,
    access: { table: 'read', bucket: { read: ['vectors/'], write: ['vectors/'] }, jwtSecret: true },
  },
  // --- MCP server (shared/mcp/): an agent's tools over the caller's documents. Streamable HTTP,
  // stateless (a server per request, nothing kept: any instance answers). JSON-RPC bodies, hence
  // `bare`; the tools search and ask (embeddings, a reply, the budget's writes) and read page
  // texts (vectors/). There is no GET (a stateless server offers no event stream: docs/DECISIONS.md).
  mcp: {
    method: 'POST',
    path: '/mcp',
    auth: 'user',
    shape: 'bare',
    access: {
      table: 'readwrite',
      bucket: { read: ['vectors/'] },
      jwtSecret: true,
      ai: ['chat', 'embeddings'],
      vectors: ['query'],
    },
  },
  // --- end MCP server
  // --- Webhooks (shared/webhooks/): a user's endpoints, their delivery logs and a ping. Creating
  // one checks its URL (DNS); the ping queues a delivery (the webhook queue).
  'create-webhook': {
    method: 'POST',
    path: '/me/webhooks',
    auth: 'user',
    shape: 'envelope',
    access: { table: 'readwrite', jwtSecret: true },
  },
  'list-webhooks': {
    method: 'GET',
    path: '/me/webhooks',
    auth: 'user',
    shape: 'envelope',
    access: { table: 'read', jwtSecret: true },
  },
  'delete-webhook': {
    method: 'DELETE',
    path: '/me/webhooks/{webhookId}',
    auth: 'user',
    shape: 'envelope',
    access: { table: 'readwrite', jwtSecret: true },
  },
  'list-webhook-deliveries': {
    method: 'GET',
    path: '/me/webhooks/{webhookId}/deliveries',
    auth: 'user',
    shape: 'envelope',
    access: { table: 'read', jwtSecret: true },
  },
  'test-webhook': {
    method: 'POST',
    path: '/me/webhooks/{webhookId}/test',
    auth: 'user',
    shape: 'envelope',
    access: { table: 'readwrite', jwtSecret: true, events: true },
  },
  // --- end webhooks
  // Orders and products: bare bodies and `{ message }` errors (the commerce side of the API).
  // Placing an order makes its payment intent; cancelling one refunds it (the provider's keys).
  'create-order': {
    method: 'POST',
    path: '/orders',
    auth: 'user',
    shape: 'bare',
    access: { table: 'readwrite', jwtSecret: true, payments: true },
  },
  'list-orders': {
    method: 'GET',
    path: '/orders',
    auth: 'user',
    shape: 'bare',
    access: { table: 'read', jwtSecret: true },
  },
  'get-order': {
    method: 'GET',
    path: '/orders/{id}',
    auth: 'user',
    shape: 'bare',
    access: { table: 'read', jwtSecret: true },
  },
  'update-order': {
    method: 'PUT',
    path: '/orders/{id}',
    auth: 'admin',
    shape: 'bare',
    access: { table: 'readwrite', jwtSecret: true, payments: true },
  },
  // The payment provider's signed events (no sign-in: the signature over the raw body is checked).
  'payment-webhook': {
    method: 'POST',
    path: '/payments/webhook',
    auth: 'public',
    shape: 'envelope',
    access: { table: 'readwrite', payments: true, events: true },
  },
  'create-product': {
    method: 'POST',
    path: '/products',
    auth: 'admin',
    shape: 'bare',
    access: { table: 'readwrite', jwtSecret: true },
  },
  'list-products': {
    method: 'GET',
    path: '/products',
    auth: 'user',
    shape: 'bare',
    access: { table: 'read', jwtSecret: true },
  },
  'get-product': {
    method: 'GET',
    path: '/products/{id}',
    auth: 'user',
    shape: 'bare',
    access: { table: 'read', jwtSecret: true },
  },
  'update-product': {
    method: 'PATCH',
    path: '/products/{id}',
    auth: 'admin',
    shape: 'bare',
    access: { table: 'readwrite', jwtSecret: true },
  },
  'delete-product': {
    method: 'DELETE',
    path: '/products/{id}',
    auth: 'admin',
    shape: 'bare',
    access: { table: 'readwrite', jwtSecret: true },
  },
} as const satisfies Record<string, HttpRoute>;

export interface ManifestFunction {
  name: string;
  entry: string;
  /** `dlq`: a dead-letter consumer (deadLetterConsumers); `schedule`: a scheduled task. */
  kind: 'http' | 'queue' | 'dlq' | 'schedule';
  timeoutSeconds: number;
  memoryMb: number;
  /** The function's /tmp (MB), when more than Lambda's 512. */
  tmpMb?: number;
  access: Access;
}

/** An HTTP route's limits unless it sets its own (API Gateway's integration timeout is 29 s). */
export const DEFAULT_HTTP_TIMEOUT_SECONDS = 29;
export const DEFAULT_HTTP_MEMORY_MB = 1024;

/** A stage's queue must stay invisible while its consumer may still be working on it (AWS advises 6 × the function timeout). */
export const VISIBILITY_TIMEOUT_FACTOR = 6;
export const visibilityTimeoutSeconds = (stage: Pick<PipelineStage, 'timeoutSeconds'>) =>
  stage.timeoutSeconds * VISIBILITY_TIMEOUT_FACTOR;

const entryOf = (name: string) => `functions/${name}.ts`;

export const httpRouteList = Object.entries(httpRoutes).map(([name, route]) => ({
  name,
  entry: entryOf(name),
  ...(route as HttpRoute),
}));

export const pipelineStageList = Object.entries(pipelineStages).map(([name, stage]) => ({
  name: name as PipelineStageName,
  entry: entryOf(name),
  ...(stage as PipelineStage),
}));

export const deadLetterConsumerList = Object.entries(deadLetterConsumers).map(([name, c]) => ({
  name,
  entry: entryOf(name),
  ...(c as DeadLetterConsumer),
}));

export const scheduledTaskList = Object.entries(scheduledTasks).map(([name, t]) => ({
  name,
  entry: entryOf(name),
  ...(t as ScheduledTask),
}));

/** Every Lambda function: HTTP, pipeline, dead-letter consumers and scheduled tasks alike. */
export const manifestFunctions: ManifestFunction[] = [
  ...httpRouteList.map((r) => ({
    name: r.name,
    entry: r.entry,
    kind: 'http' as const,
    timeoutSeconds: r.timeoutSeconds ?? DEFAULT_HTTP_TIMEOUT_SECONDS,
    memoryMb: r.memoryMb ?? DEFAULT_HTTP_MEMORY_MB,
    tmpMb: 'tmpMb' in r ? r.tmpMb : undefined,
    access: 'keyScope' in r ? { ...r.access, apiKeys: true } : r.access,
  })),
  ...pipelineStageList.map((s) => ({
    name: s.name,
    entry: s.entry,
    kind: 'queue' as const,
    timeoutSeconds: s.timeoutSeconds,
    memoryMb: s.memoryMb,
    tmpMb: 'tmpMb' in s ? s.tmpMb : undefined,
    access: s.access,
  })),
  ...deadLetterConsumerList.map((c) => ({
    name: c.name,
    entry: c.entry,
    kind: 'dlq' as const,
    timeoutSeconds: c.timeoutSeconds,
    memoryMb: c.memoryMb,
    access: c.access,
  })),
  {
    name: webhookDelivery.name,
    entry: webhookDelivery.entry,
    kind: 'queue' as const,
    timeoutSeconds: webhookDelivery.timeoutSeconds,
    memoryMb: webhookDelivery.memoryMb,
    access: webhookDelivery.access,
  },
  ...scheduledTaskList.map((t) => ({
    name: t.name,
    entry: t.entry,
    kind: 'schedule' as const,
    timeoutSeconds: t.timeoutSeconds,
    memoryMb: t.memoryMb,
    access: t.access,
  })),
];

/** What a stage's runner (shared/ingestion/stage-handler.ts) is told of its deployment. */
export const stageSettings = (name: PipelineStageName): StageSettings => ({
  name,
  maxReceiveCount: pipelineStages[name].maxReceiveCount,
});
