import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { projectRoot } from '../../infra/local/runtime.ts';
import { TSX_CLI } from './service.ts';

// The LangChain.js pipeline (bench/lib/langchain-child.ts) in a child process that stays up
// between documents: `ingest` sends it a PDF's path and the embedding server's base URL and
// resolves with its times, measured in the child from the loader's start to the store filled.

export interface LangChainRun {
  ms: number;
  loadMs: number;
  splitMs: number;
  embedMs: number;
  pages: number;
  chunks: number;
  hitPage?: number;
}

export interface LangChainPipeline {
  ingest(path: string, baseURL: string, query?: string): Promise<LangChainRun>;
  stop(): Promise<void>;
}

export function startLangChain(): LangChainPipeline {
  const child = spawn(process.execPath, [TSX_CLI, join(projectRoot, 'bench/lib/langchain-child.ts')], {
    cwd: projectRoot,
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const waiting = new Map<number, { resolve: (r: LangChainRun) => void; reject: (e: Error) => void }>();
  createInterface({ input: child.stdout! }).on('line', (line) => {
    const reply = JSON.parse(line) as LangChainRun & { id: number; error?: string };
    const w = waiting.get(reply.id);
    waiting.delete(reply.id);
    if (reply.error) w?.reject(new Error(`LangChain pipeline: ${reply.error}`));
    else w?.resolve(reply);
  });
  void exited.then(() => {
    for (const w of waiting.values()) w.reject(new Error('the LangChain child exited'));
    waiting.clear();
  });
  let next = 0;
  return {
    ingest(path, baseURL, query) {
      const id = next++;
      return new Promise((resolve, reject) => {
        waiting.set(id, { resolve, reject });
        child.stdin!.write(`${JSON.stringify({ id, path, baseURL, query })}\n`);
      });
    },
    async stop() {
      child.stdin!.end();
      const timer = setTimeout(() => child.kill('SIGKILL'), 5_000);
      await exited;
      clearTimeout(timer);
    },
  };
}
