import { type DynamoDBDocumentClient, QueryCommand } from '@aws-sdk/lib-dynamodb';

// A file's chunk items as the table holds them (PK FILE#<id>, SK CHUNK#<index>), read over every
// page of the query: what a test counts to see that a run wrote each chunk, and wrote it once.

/** The indexes of `fileId`'s chunk items in `tableName`, in key order (0..n-1 when each was written once). */
export async function chunkIndexes(db: DynamoDBDocumentClient, tableName: string, fileId: string): Promise<number[]> {
  const indexes: number[] = [];
  let start: Record<string, unknown> | undefined;
  do {
    const page = await db.send(
      new QueryCommand({
        TableName: tableName,
        KeyConditionExpression: 'PK = :pk AND begins_with(SK, :c)',
        ExpressionAttributeValues: { ':pk': `FILE#${fileId}`, ':c': 'CHUNK#' },
        ProjectionExpression: 'SK',
        ExclusiveStartKey: start,
      }),
    );
    indexes.push(...(page.Items ?? []).map((item) => Number(String(item.SK).slice('CHUNK#'.length))));
    start = page.LastEvaluatedKey;
  } while (start);
  return indexes;
}
