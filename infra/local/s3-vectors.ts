import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { AddressInfo } from 'node:net';
import { ApiError, invalid, LIMITS } from './s3-vectors/limits.ts';
import { vectorOperations } from './s3-vectors/operations.ts';
import { loadBuckets } from './s3-vectors/persistence.ts';
import type { VectorBucket } from './s3-vectors/vector-slots.ts';

// A loopback stand-in of Amazon S3 Vectors, for npm start (VECTOR_STORE=s3vectors) and the tests:
// the service's S3 Vectors client talks to it as to the real endpoint. Its wire protocol is the
// service's REST-JSON: POST /<Operation> with a JSON body, errors as an `x-amzn-errortype` header
// and `{ message }` with the documented statuses (ValidationException 400, AccessDeniedException
// 403, NotFoundException 404, ConflictException 409). Its limits are the documented ones:
// dimension 1–4,096, topK 1–100, 500 vectors per PutVectors and DeleteVectors, 100 per GetVectors,
// 1,000 per ListVectors page, keys of 1–1,024 characters, metadata up to 40 KB per vector of which
// 2 KB filterable, 50 keys, 10 non-filterable keys per index, 20 MiB per request. Distances are
// exact (the service's are approximate): cosine (1 − cos) or euclidean. Filters are evaluated as
// documented: implicit equality, $eq/$ne/$gt/$gte/$lt/$lte/$in/$nin/$exists, $and/$or, and an
// array metadata value matching $eq/$in when any element does.
//
// With a dataDir (npm start), each index is kept in dataDir/s3-vectors/<bucket>/: <index>.json
// its settings, <index>.log a line per vector written or deleted, appended by each request and
// compacted when the stand-in starts (read line by line: no file holds a whole index as one
// string, which a million vectors would not fit in).
//
// Its parts (s3-vectors/): limits.ts (the limits, errors and value checks), filters.ts (filters
// and distances), vector-slots.ts (an index's vectors), operations.ts (the API's operations),
// persistence.ts (dataDir).

export interface S3VectorsStandIn {
  url: string;
  /** Vectors stored in an index (tests look inside); undefined when there is no such index. */
  vectorKeys(bucket: string, index: string): string[] | undefined;
  /** Index names of a bucket. */
  indexNames(bucket: string): string[];
  /** Requests answered so far, by operation. */
  calls: Map<string, number>;
  /** Stops the server and drops the vectors held (what was kept in dataDir stays). */
  close(): Promise<void>;
}

export interface S3VectorsOptions {
  /** Where indexes are kept across restarts (npm start); none: in memory (tests). */
  dataDir?: string;
  port?: number;
}

export async function startS3Vectors(options: S3VectorsOptions = {}): Promise<S3VectorsStandIn> {
  const buckets = new Map<string, VectorBucket>();
  const calls = new Map<string, number>();
  const dir = options.dataDir ? join(options.dataDir, 's3-vectors') : undefined;

  if (dir) {
    mkdirSync(dir, { recursive: true });
    for (const bucket of await loadBuckets(dir)) buckets.set(bucket.name, bucket);
  }

  const operations = vectorOperations(buckets, dir);

  const answer = (res: ServerResponse, status: number, body: unknown, errorType?: string) => {
    res.setHeader('content-type', 'application/json');
    if (errorType) res.setHeader('x-amzn-errortype', errorType);
    res.writeHead(status);
    res.end(JSON.stringify(body));
  };

  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    const operation = new URL(req.url ?? '/', 'http://localhost').pathname.slice(1);
    try {
      const run = operations[operation];
      if (req.method !== 'POST' || !run)
        throw new ApiError('UnknownOperationException', 404, `Unknown operation ${operation}`);
      // Requests are SigV4-signed by the SDK; an unsigned one is refused as the service does.
      if (!String(req.headers.authorization ?? '').startsWith('AWS4-HMAC-SHA256 '))
        throw new ApiError('AccessDeniedException', 403, 'Missing or invalid signature');
      const chunks: Buffer[] = [];
      let size = 0;
      for await (const chunk of req) {
        size += (chunk as Buffer).length;
        if (size > LIMITS.maxRequestBytes) throw invalid(`Request payload larger than ${LIMITS.maxRequestBytes} bytes`);
        chunks.push(chunk as Buffer);
      }
      let body: unknown;
      try {
        body = chunks.length ? JSON.parse(Buffer.concat(chunks).toString('utf8')) : {};
      } catch {
        throw invalid('The request body is not valid JSON');
      }
      if (typeof body !== 'object' || body === null || Array.isArray(body))
        throw invalid('The request body must be an object');
      calls.set(operation, (calls.get(operation) ?? 0) + 1);
      answer(res, 200, run(body as Record<string, unknown>));
    } catch (err) {
      if (err instanceof ApiError) answer(res, err.status, { message: err.message }, err.type);
      else answer(res, 500, { message: 'Internal error' }, 'InternalServerException');
    }
  };

  const server: Server = createServer((req, res) => void handle(req, res));
  await new Promise<void>((resolve) => server.listen(options.port ?? 0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    calls,
    vectorKeys: (bucket, index) => {
      const found = buckets.get(bucket)?.indexes.get(index);
      return found ? [...found.vectors.keys()].sort() : undefined;
    },
    indexNames: (bucket) => [...(buckets.get(bucket)?.indexes.keys() ?? [])].sort(),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
        buckets.clear(); // what it held is garbage even while the stand-in object is still referenced
      }),
  };
}
