import { performance } from 'node:perf_hooks';
import { createInterface } from 'node:readline';
import { BufferLoader } from '@langchain/classic/document_loaders/fs/buffer';
import { MemoryVectorStore } from '@langchain/classic/vectorstores/memory';
import { Document } from '@langchain/core/documents';
import { OpenAIEmbeddings } from '@langchain/openai';
import { RecursiveCharacterTextSplitter } from '@langchain/textsplitters';
import { PDFParse } from 'pdf-parse';

// What a developer who does not use the service writes, from LangChain.js's documentation: the
// PDF loaded page by page (PDFLoader over pdf-parse), split with RecursiveCharacterTextSplitter
// (1,000 characters, 200 overlap, as in its RAG tutorial), embedded with OpenAIEmbeddings
// (text-embedding-3-small, its defaults: 512 inputs a request, 2 requests at once, its retries) into a
// MemoryVectorStore. A process of its own, as the developer's app would be (pdf-parse brings its
// own pdf.js, which cannot share a process with the bench's). It stays up between documents, so
// the runs after the first are warm. Protocol: one JSON line in ({ id, path, baseURL }), one out.
//
// PDFLoader itself lives in @langchain/community, whose install fails here (it requires
// @browserbasehq/stagehand as a peer, which wants openai 4 and zod 3 beside our openai 6 and
// zod 4), so its pdf-parse v2 path is written out below as it is there: BufferLoader reads the
// file, PDFParse.getText() gives the pages, one Document per page with text.

class PDFLoader extends BufferLoader {
  async parse(raw: Buffer, metadata: Record<string, unknown>): Promise<Document[]> {
    const parser = new PDFParse({ data: new Uint8Array(raw.buffer, raw.byteOffset, raw.byteLength) });
    try {
      const text = await parser.getText();
      const info = await parser.getInfo();
      return text.pages
        .filter((page) => page.text && page.text.trim().length > 0)
        .map(
          (page) =>
            new Document({
              pageContent: page.text,
              metadata: {
                ...metadata,
                pdf: { info: info.info, metadata: info.metadata, totalPages: text.total },
                loc: { pageNumber: page.num },
              },
            }),
        );
    } finally {
      await parser.destroy();
    }
  }
}

interface Job {
  id: number;
  path: string;
  baseURL: string;
  query?: string;
}

async function ingest(job: Job) {
  const t0 = performance.now();
  const pages = await new PDFLoader(job.path).load();
  const t1 = performance.now();
  const splitter = new RecursiveCharacterTextSplitter({ chunkSize: 1000, chunkOverlap: 200 });
  const chunks = await splitter.splitDocuments(pages);
  const t2 = performance.now();
  const embeddings = new OpenAIEmbeddings({
    model: 'text-embedding-3-small',
    apiKey: 'bench-key',
    configuration: { baseURL: job.baseURL },
  });
  const store = await MemoryVectorStore.fromDocuments(chunks, embeddings);
  const t3 = performance.now();
  // Not timed: the store answers a query (so what was timed is a searchable store).
  const hit = job.query ? await store.similaritySearch(job.query, 1) : [];
  return {
    id: job.id,
    ms: t3 - t0,
    loadMs: t1 - t0,
    splitMs: t2 - t1,
    embedMs: t3 - t2,
    pages: pages.length,
    chunks: chunks.length,
    hitPage: (hit[0]?.metadata.loc as { pageNumber?: number } | undefined)?.pageNumber,
  };
}

for await (const line of createInterface({ input: process.stdin })) {
  if (!line.trim()) continue;
  const job = JSON.parse(line) as Job;
  try {
    process.stdout.write(`${JSON.stringify(await ingest(job))}\n`);
  } catch (err) {
    process.stdout.write(`${JSON.stringify({ id: job.id, error: String((err as Error)?.stack ?? err) })}\n`);
  }
}
