import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { AttachmentRepository } from './attachment-repository.ts';
import { FileRepository } from './file-repository.ts';
import type { FileRecord } from './file-record.ts';

// The files attached to a chat, with their current records (GET /chat/{chatId}, and the check
// that a file chat's PDF is ready before a prompt is answered from it).

export interface ChatFilesDeps {
  attachments: AttachmentRepository;
  files: FileRepository;
}

export const chatFilesDeps = (db: DynamoDBDocumentClient, table: string): ChatFilesDeps => ({
  attachments: new AttachmentRepository(db, table),
  files: new FileRepository(db, table),
});

/** The chat's files in the order they were attached; attachments of deleted files are left out. */
export async function chatFiles(deps: ChatFilesDeps, chatId: string): Promise<FileRecord[]> {
  const attachments = (await deps.attachments.listByChat(chatId)).sort((a, b) =>
    a.attachedAt.localeCompare(b.attachedAt),
  );
  if (!attachments.length) return [];
  const byId = new Map((await deps.files.getMany(attachments.map((a) => a.fileId))).map((f) => [f.id, f]));
  return attachments.map((a) => byId.get(a.fileId)).filter((f): f is FileRecord => f !== undefined);
}

/** Where a file's ingestion stands, in words ("extracting text, page 3 of 12"). */
export function describeProgress(f: FileRecord): string {
  if (f.status === 'uploaded') return 'not ingested yet (POST /message/pdf)';
  const total = f.pagesTotal ?? f.pages;
  switch (f.stage) {
    case 'fetch':
      return 'downloading';
    case 'extract':
      return total ? `extracting text, page ${f.pagesDone ?? 0} of ${total}` : 'extracting text';
    case 'embed':
      return f.partsTotal ? `embedding, part ${f.partsDone ?? 0} of ${f.partsTotal}` : 'embedding';
    default:
      return f.stage ? `at stage ${f.stage}` : 'processing';
  }
}
