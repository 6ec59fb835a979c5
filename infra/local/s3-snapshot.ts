import { mkdir, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { dirname, join, relative } from 'node:path';
import { GetObjectCommand, ListObjectsV2Command, PutObjectCommand, type S3Client } from '@aws-sdk/client-s3';

// fauxqs keeps S3 in memory; the local runtime saves the bucket under DATA_DIR when it stops
// and restores it when it starts, so uploads and chunk files survive a restart.

export async function saveBucket(s3: S3Client, bucket: string, dir: string): Promise<number> {
  await rm(dir, { recursive: true, force: true });
  let token: string | undefined;
  let count = 0;
  do {
    const page = await s3.send(new ListObjectsV2Command({ Bucket: bucket, ContinuationToken: token }));
    for (const obj of page.Contents ?? []) {
      const out = await s3.send(new GetObjectCommand({ Bucket: bucket, Key: obj.Key! }));
      const file = join(dir, encodeURIComponent(obj.Key!));
      await mkdir(dirname(file), { recursive: true });
      await writeFile(file, await out.Body!.transformToByteArray());
      if (out.ContentType) await writeFile(`${file}.content-type`, out.ContentType);
      count++;
    }
    token = page.NextContinuationToken;
  } while (token);
  return count;
}

export async function restoreBucket(s3: S3Client, bucket: string, dir: string): Promise<number> {
  let names: string[];
  try {
    names = await readdir(dir);
  } catch {
    return 0;
  }
  let count = 0;
  for (const name of names.filter((n) => !n.endsWith('.content-type'))) {
    const file = join(dir, name);
    const contentType = await readFile(`${file}.content-type`, 'utf8').catch(() => undefined);
    await s3.send(
      new PutObjectCommand({
        Bucket: bucket,
        Key: decodeURIComponent(relative(dir, file)),
        Body: await readFile(file),
        ...(contentType && { ContentType: contentType }),
      }),
    );
    count++;
  }
  return count;
}
