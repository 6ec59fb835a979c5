import {
  AbortMultipartUploadCommand,
  CompleteMultipartUploadCommand,
  CreateMultipartUploadCommand,
  UploadPartCommand,
  type S3Client,
} from '@aws-sdk/client-s3';

// An object written in parts as its bytes arrive (an S3 multipart upload): at most one part is
// buffered, so an object of any size costs PART_BYTES of memory. S3's smallest part (but the last) is 5 MiB.

export const PART_BYTES = 5 * 1024 * 1024;

export class MultipartSink {
  private uploadId: string | undefined;
  private readonly parts: { ETag: string; PartNumber: number }[] = [];
  private buffered: Buffer[] = [];
  private bufferedBytes = 0;

  constructor(
    private readonly s3: S3Client,
    private readonly target: { bucket: string; key: string; contentType: string },
  ) {}

  /** Appends bytes; a full part is uploaded before this returns. */
  readonly write = async (chunk: Buffer): Promise<void> => {
    this.buffered.push(chunk);
    this.bufferedBytes += chunk.byteLength;
    if (this.bufferedBytes >= PART_BYTES) await this.flush();
  };

  private async flush(): Promise<void> {
    if (!this.uploadId) {
      const created = await this.s3.send(
        new CreateMultipartUploadCommand({
          Bucket: this.target.bucket,
          Key: this.target.key,
          ContentType: this.target.contentType,
        }),
      );
      this.uploadId = created.UploadId!;
    }
    const body = Buffer.concat(this.buffered);
    this.buffered = [];
    this.bufferedBytes = 0;
    const PartNumber = this.parts.length + 1;
    const out = await this.s3.send(
      new UploadPartCommand({
        Bucket: this.target.bucket,
        Key: this.target.key,
        UploadId: this.uploadId,
        PartNumber,
        Body: body,
      }),
    );
    this.parts.push({ ETag: out.ETag!, PartNumber });
  }

  /** Uploads what is buffered as the last part and completes the object. */
  async complete(): Promise<void> {
    await this.flush();
    await this.s3.send(
      new CompleteMultipartUploadCommand({
        Bucket: this.target.bucket,
        Key: this.target.key,
        UploadId: this.uploadId,
        MultipartUpload: { Parts: this.parts },
      }),
    );
  }

  /** Drops the parts uploaded so far (a failed build leaves no object; the lifecycle rule is the backstop). */
  async abort(): Promise<void> {
    if (!this.uploadId) return;
    await this.s3
      .send(
        new AbortMultipartUploadCommand({ Bucket: this.target.bucket, Key: this.target.key, UploadId: this.uploadId }),
      )
      .catch(() => undefined);
  }
}
