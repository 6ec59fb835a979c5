import { PAGE_FUNCTION_MEMORY_MB } from '#shared/ingestion/page-service.ts';
import { PDF_COPY_TMP_MB, type Access } from './access.ts';

// What each HTTP route's function gets, by the route's name (its definition is its domain's:
// shared/<domain>/routes.ts; infra/routes.ts joins the two and refuses a name either side lacks).
// The order here is the manifest's order.

export interface HttpDeployment {
  /** Seconds (DEFAULT_HTTP_TIMEOUT_SECONDS unless set). */
  timeoutSeconds?: number;
  /** MB (DEFAULT_HTTP_MEMORY_MB unless set). */
  memoryMb?: number;
  /** The function's /tmp (MB); Lambda's 512 unless set. */
  tmpMb?: number;
  access: Access;
}

const signedIn = { table: 'read', jwtSecret: true } as const;
const signedInWrites = { table: 'readwrite', jwtSecret: true } as const;
/** Answers from the caller's files: retrieval (the packs' and S3 Vectors' reads), a reply, the budget's writes. */
const answersFromFiles: Access = {
  table: 'readwrite',
  bucket: { read: ['vectors/'] },
  jwtSecret: true,
  ai: ['chat', 'embeddings'],
  vectors: ['query'],
};
/** A file chat's reply (send-message and regenerate-reply): answersFromFiles, its passages reranked. */
const repliesFromFiles: Access = { ...answersFromFiles, ai: ['chat', 'embeddings', 'rerank'] };
/** Starts an upload (one PUT or multipart): the file's record, and presigned URLs into uploads/. */
const startsUpload: Access = {
  table: 'readwrite',
  bucket: { read: ['uploads/'], write: ['uploads/'] },
  jwtSecret: true,
};
/** Draws a page in the bounded pdf.js child (from the run's source PDF) and keeps it beside the file's vectors. */
const drawsPages = {
  timeoutSeconds: 60,
  memoryMb: PAGE_FUNCTION_MEMORY_MB,
  tmpMb: PDF_COPY_TMP_MB,
  access: { table: 'read', bucket: { read: ['vectors/'], write: ['vectors/'] }, jwtSecret: true },
} as const satisfies HttpDeployment;

export const httpDeployments = {
  'sign-in': { access: signedInWrites },
  // The signed-in user and their usage, read from their counters.
  'get-me': { access: signedIn },
  // Erases the caller and everything of theirs (shared/erasure/erasure.ts): the deletes of the
  // file and chat routes, for every file and chat, within the function's time; the sweep finishes.
  'delete-me': {
    access: {
      table: 'readwrite',
      bucket: { write: ['uploads/', 'work/', 'vectors/', 'exports/'] },
      jwtSecret: true,
      vectors: ['delete'],
    },
  },
  // An account export (shared/account-export/): POST records a job the data sweep builds into
  // exports/; GET presigns the ZIP once built, hence its read of exports/ and nothing else.
  'create-export': { access: signedInWrites },
  'get-export': { access: { table: 'read', bucket: { read: ['exports/'] }, jwtSecret: true } },
  // --- Programs: API keys and the OpenAI-compatible API (docs/DECISIONS.md "API keys", "OpenAI-compatible API").
  'create-api-key': { access: signedInWrites },
  'list-api-keys': { access: signedIn },
  'revoke-api-key': { access: signedInWrites },
  // OpenAI's chat completions answer with the reply machinery of send-message, hence its limits and rights.
  'openai-list-models': { access: signedIn },
  'openai-chat-completions': {
    timeoutSeconds: 300,
    access: answersFromFiles,
  },
  // --- end of programs
  // Chats and messages. send-message may wait on a long reply, hence its timeout; it calls the
  // model, and embeds the prompt in a file chat.
  'create-chat': { access: signedInWrites },
  'list-chats': { access: signedIn },
  'get-chat': { access: signedIn },
  'update-chat': { access: signedInWrites },
  'delete-chat': { access: signedInWrites },
  'search-chats': { access: signedIn },
  'list-messages': { access: signedIn },
  'send-message': {
    timeoutSeconds: 300,
    access: repliesFromFiles,
  },
  // What send-message does, but the prompt.
  'regenerate-reply': {
    timeoutSeconds: 300,
    access: repliesFromFiles,
  },
  // Resumed from the table, as long as a reply may take.
  'follow-reply': { timeoutSeconds: 300, access: signedInWrites },
  'stop-reply': { access: signedInWrites },
  'put-feedback': { access: signedInWrites },
  'delete-feedback': { access: signedInWrites },
  // Export and share (docs/DECISIONS.md, Export and share): the export is streamed as it is written.
  'export-chat': { timeoutSeconds: 60, access: signedIn },
  'share-chat': { access: signedInWrites },
  'revoke-share': { access: signedInWrites },
  'get-shared-chat': { access: { table: 'readwrite' } },
  // PDF upload and ingestion.
  'create-upload': { access: startsUpload },
  'create-multipart-upload': { access: startsUpload },
  'complete-multipart-upload': { access: { table: 'readwrite', bucket: { write: ['uploads/'] }, jwtSecret: true } },
  'list-uploads': { access: signedIn },
  'delete-upload': {
    access: {
      table: 'readwrite',
      bucket: { write: ['uploads/', 'work/', 'vectors/'] },
      sendTo: ['pdf-fetch'],
      jwtSecret: true,
      vectors: ['delete'],
    },
  },
  'ingest-pdf': { access: { table: 'readwrite', sendTo: ['pdf-fetch'], jwtSecret: true } },
  'get-pdf-status': { access: signedIn },
  // Collections of files (shared/collections/): the table only; a delete leaves the files.
  'create-collection': { access: signedInWrites },
  'list-collections': { access: signedIn },
  'get-collection': { access: signedIn },
  'update-collection': { access: signedInWrites },
  'delete-collection': { access: signedInWrites },
  'add-collection-file': { access: signedInWrites },
  'remove-collection-file': { access: signedInWrites },
  'list-collection-files': { access: signedIn },
  // The query is embedded (charged to the token budget, hence the writes), the packed vectors read
  // as a file chat's retrieval reads them.
  'search-files': {
    access: {
      table: 'readwrite',
      bucket: { read: ['vectors/'] },
      jwtSecret: true,
      ai: ['embeddings', 'rerank'],
      vectors: ['query'],
    },
  },
  // A page's text (written at ingestion) and its image, drawn on the first request by the bounded
  // pdf.js child from the run's source PDF and kept beside the file's vectors. A file part's page
  // is drawn as the page route's.
  'get-pdf-page': drawsPages,
  'get-file-part': drawsPages,
  // --- MCP server (shared/mcp/): the tools search and ask (embeddings, a reply, the budget's
  // writes) and read page texts (vectors/).
  mcp: {
    access: answersFromFiles,
  },
  // --- end MCP server
  // --- Webhooks (shared/webhooks/): the ping queues a delivery (the webhook queue).
  'create-webhook': { access: signedInWrites },
  'list-webhooks': { access: signedIn },
  'delete-webhook': { access: signedInWrites },
  'list-webhook-deliveries': { access: signedIn },
  'test-webhook': { access: { table: 'readwrite', jwtSecret: true, events: true } },
  // --- end webhooks
  // Orders and products. Placing an order makes its payment intent; cancelling one refunds it
  // (the provider's keys).
  'create-order': { access: { table: 'readwrite', jwtSecret: true, payments: true } },
  'list-orders': { access: signedIn },
  'get-order': { access: signedIn },
  'update-order': { access: { table: 'readwrite', jwtSecret: true, payments: true } },
  // The payment provider's signed events: no JWT secret (the signature over the raw body is checked).
  'payment-webhook': { access: { table: 'readwrite', payments: true, events: true } },
  'create-product': { access: signedInWrites },
  'list-products': { access: signedIn },
  'get-product': { access: signedIn },
  'update-product': { access: signedInWrites },
  'delete-product': { access: signedInWrites },
} as const satisfies Record<string, HttpDeployment>;
