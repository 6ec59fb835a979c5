import '../config/retrieval.ts';
import {
  CreateIndexCommand,
  DeleteVectorsCommand,
  ListIndexesCommand,
  PutVectorsCommand,
  QueryVectorsCommand,
  S3VectorsClient,
} from '@aws-sdk/client-s3vectors';
import type { Config } from '../config.ts';
import { traced } from '../observability/tracing.ts';

// The few S3 Vectors operations the vector store uses, over the AWS SDK's client (signed, retried
// on throttling and 5xx by the SDK). A module of its own: imported only with VECTOR_STORE=s3vectors.

type Metadata = Record<string, unknown>;

export interface S3VectorsApi {
  createIndex(input: {
    vectorBucketName: string;
    indexName: string;
    dataType: 'float32';
    dimension: number;
    distanceMetric: 'cosine' | 'euclidean';
  }): Promise<void>;
  putVectors(input: {
    vectorBucketName: string;
    indexName: string;
    vectors: { key: string; data: { float32: number[] }; metadata?: Metadata }[];
  }): Promise<void>;
  deleteVectors(input: { vectorBucketName: string; indexName: string; keys: string[] }): Promise<void>;
  /** Every index name with the prefix (all pages). */
  listIndexes(input: { vectorBucketName: string; prefix: string }): Promise<string[]>;
  queryVectors(input: {
    vectorBucketName: string;
    indexName: string;
    queryVector: { float32: number[] };
    topK: number;
    filter?: Metadata;
    returnDistance?: boolean;
    returnMetadata?: boolean;
  }): Promise<{ key: string; distance?: number; metadata?: Metadata }[]>;
}

export function createS3VectorsClient({
  AWS_REGION,
  S3_VECTORS_ENDPOINT,
}: Pick<Config, 'AWS_REGION' | 'S3_VECTORS_ENDPOINT'>): S3VectorsClient {
  // An endpoint only for the stand-in (npm start, tests); undefined: the service's own.
  return traced(new S3VectorsClient({ region: AWS_REGION, endpoint: S3_VECTORS_ENDPOINT }));
}

export function s3VectorsApiOf(client: S3VectorsClient): S3VectorsApi {
  return {
    async createIndex(input) {
      await client.send(new CreateIndexCommand(input));
    },
    async putVectors(input) {
      await client.send(new PutVectorsCommand(input as ConstructorParameters<typeof PutVectorsCommand>[0]));
    },
    async deleteVectors(input) {
      await client.send(new DeleteVectorsCommand(input));
    },
    async listIndexes({ vectorBucketName, prefix }) {
      const names: string[] = [];
      let nextToken: string | undefined;
      do {
        const out = await client.send(new ListIndexesCommand({ vectorBucketName, prefix, nextToken }));
        for (const index of out.indexes ?? []) if (index.indexName) names.push(index.indexName);
        nextToken = out.nextToken;
      } while (nextToken);
      return names;
    },
    async queryVectors(input) {
      const out = await client.send(
        new QueryVectorsCommand(input as ConstructorParameters<typeof QueryVectorsCommand>[0]),
      );
      return (out.vectors ?? []).map((v) => ({
        key: v.key ?? '',
        distance: v.distance,
        metadata: v.metadata as Metadata | undefined,
      }));
    },
  };
}

let api: S3VectorsApi | undefined;

/** The S3 Vectors operations of this cold start's configuration (one client, made on first use). */
export function s3VectorsApi(config: Pick<Config, 'AWS_REGION' | 'S3_VECTORS_ENDPOINT'>): S3VectorsApi {
  api ??= s3VectorsApiOf(createS3VectorsClient(config));
  return api;
}
