import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { Config } from '../config.ts';
import type { Retriever } from './retrieve.ts';

// File chats search their PDFs' packed vectors in S3: the retrieval code and the S3 client are
// imported, and the retriever composed, on an instance's first file-chat prompt, so the cold
// start of a function that answers prompts parses neither.

export function retrieverOnFirstUse(config: Config, db: DynamoDBDocumentClient): Retriever {
  let retriever: Promise<Retriever> | undefined;
  const compose = async () => {
    const [{ retrieverFor }, { s3Client }] = await Promise.all([import('./retrieve.ts'), import('../s3-client.ts')]);
    return retrieverFor(config, db, s3Client());
  };
  return async (input) => {
    retriever ??= compose();
    return (await retriever)(input);
  };
}
