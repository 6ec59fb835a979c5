import type { TestApp } from './app.ts';

// The file a test needs before it can ask about one: a record made with POST /upload, and the
// app's PDF server's bytes ingested into it with POST /message/pdf.

/** POST /upload for a PDF (the size is declared, nothing is sent); the upload (fileId, downloadUrl, …). */
export async function declareUpload(app: TestApp, token: string, fileName = 'doc.pdf', size = 5000) {
  const res = await app.request('POST', '/upload', {
    token,
    body: { fileName, contentType: 'application/pdf', size },
  });
  expect(res.status).toBe(201);
  return res.body.data as { fileId: string; downloadUrl: string };
}

/** POST /upload for a PDF (the size is declared, nothing is sent); the new file's id. */
export async function uploadFile(app: TestApp, token: string, fileName = 'doc.pdf', size = 5000): Promise<string> {
  return (await declareUpload(app, token, fileName, size)).fileId;
}

/** A PDF's bytes sent through POST /upload and its presigned PUT; the upload (fileId, downloadUrl, …). */
export async function uploadBytes(app: TestApp, token: string, fileName: string, bytes: Uint8Array) {
  const res = await app.request('POST', '/upload', {
    token,
    body: { fileName, contentType: 'application/pdf', size: bytes.byteLength },
  });
  expect(res.status).toBe(201);
  const upload = res.body.data;
  expect((await fetch(upload.uploadUrl, { method: 'PUT', headers: upload.uploadHeaders, body: bytes })).status).toBe(
    200,
  );
  return upload as { fileId: string; downloadUrl: string };
}

/**
 * A file uploaded and the PDF server's `path` ingested into it (and into a chat or a collection
 * when one is named), completed within the request; the file's id.
 */
export async function ingestedFile(
  app: TestApp,
  token: string,
  path: string,
  into: { fileName?: string; chatId?: string; collectionId?: string } = {},
): Promise<string> {
  const fileId = await uploadFile(app, token, into.fileName ?? path.slice(1));
  const { chatId, collectionId } = into;
  const ingested = await app.request('POST', '/message/pdf', {
    token,
    body: { url: `${app.pdfs.url}${path}`, fileId, chatId, collectionId },
  });
  expect(ingested.body.data.embeddingsData.status).toBe('completed');
  return fileId;
}

/** A new file chat named `name` with the PDF server's `path` ingested into it; its chat and file ids. */
export async function fileChatWith(
  app: TestApp,
  token: string,
  path: string,
  name: string,
): Promise<{ chatId: string; fileId: string }> {
  const chat = await app.request('POST', '/chat', { token, body: { name, type: 'file' } });
  expect(chat.status).toBe(201);
  const chatId: string = chat.body.data.id;
  return { chatId, fileId: await ingestedFile(app, token, path, { chatId }) };
}
