import http, { type IncomingMessage, type ServerResponse } from 'node:http';
import { listenOnLoopback } from './loopback-server.ts';

// A loopback HTTP server serving PDFs (and things that are not) with controllable misbehaviour,
// for the ingestion tests. Every request is recorded; every response says how many body bytes
// it wrote and whether the client hung up before the end.
//
//   const server = await startPdfServer();
//   server.serve('/doc.pdf', { body: bytes });                                  // a plain file
//   server.serve('/lies.pdf', { body: big, contentLength: 1000 });              // a lying Content-Length
//   server.serve('/unknown.pdf', { body: big, contentLength: 'none' });         // chunked, no length
//   server.serve('/slow.pdf', { body: bytes, drip: { bytes: 10, everyMs: 50 } });
//   server.serve('/page.pdf', { body: '<html>…', contentType: 'text/html' });
//   server.redirect('/hop1', '/hop2');                                          // or an absolute URL
//   server.serve('/gone.pdf', { status: 404 });
//   server.serve('/short.pdf', { body: bytes, cutAfter: 100 });                  // the connection cut mid-body
//   server.serve('/held.pdf', { body: bytes, head: { hold: released } });     // HEAD waits for a promise
//   server.serve('/paused.pdf', { body: bytes, holdAfter: { bytes: 1e6, until: released } }); // the body pauses
//   server.count('/doc.pdf'); server.responses('/lies.pdf')[0].aborted;

export interface Behaviour {
  body?: Uint8Array | string;
  /** A generated body of this many bytes (starts with %PDF-); instead of `body`. */
  size?: number;
  status?: number;
  contentType?: string;
  /** The Content-Length to announce: the true one by default, 'none' for chunked, or any number (a lie). */
  contentLength?: number | 'none';
  /** What HEAD answers: the GET's status and length by default; not before `hold` settles, if given. */
  head?: { status?: number; contentLength?: number | 'none'; hold?: Promise<unknown> };
  /** Send the body slowly. */
  drip?: { bytes: number; everyMs: number };
  /** Close the connection after this many body bytes (fewer than the Content-Length announced). */
  cutAfter?: number;
  /** Stop after this many body bytes until `until` settles, then send the rest. */
  holdAfter?: { bytes: number; until: Promise<unknown> };
}

export interface RecordedRequest {
  method: string;
  path: string;
  headers: IncomingMessage['headers'];
}

export interface ResponseRecord {
  method: string;
  path: string;
  bytesWritten: number;
  /** The client closed the connection before the body ended. */
  aborted: boolean;
  finished: Promise<void>;
}

export interface PdfServer {
  /** http://127.0.0.1:<port> */
  url: string;
  port: number;
  requests: RecordedRequest[];
  serve(path: string, behaviour: Behaviour): void;
  redirect(path: string, to: string, status?: number): void;
  /** Requests received (for one path, or all). */
  count(path?: string): number;
  responses(path?: string): ResponseRecord[];
  reset(): void;
  close(): Promise<void>;
}

const CHUNK = 64 * 1024;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function generated(_size: number, offset: number, length: number): Buffer {
  const out = Buffer.alloc(length, 0x20);
  const header = Buffer.from('%PDF-1.7\n');
  if (offset < header.length) header.copy(out, 0, offset, Math.min(header.length, offset + length));
  return out;
}

export async function startPdfServer(): Promise<PdfServer> {
  const requests: RecordedRequest[] = [];
  const records: ResponseRecord[] = [];
  let routes = new Map<string, Behaviour | { redirect: string; status: number }>();

  async function writeBody(req: IncomingMessage, res: ServerResponse, b: Behaviour, record: ResponseRecord) {
    const body =
      b.body === undefined ? undefined : typeof b.body === 'string' ? Buffer.from(b.body) : Buffer.from(b.body);
    const total = body?.length ?? b.size ?? 0;
    let sent = 0;
    const end = Math.min(total, b.cutAfter ?? total);
    let held = false;
    while (sent < end && !record.aborted) {
      if (b.holdAfter && !held && sent >= b.holdAfter.bytes) {
        held = true;
        await b.holdAfter.until;
      }
      const n = Math.min(
        b.drip?.bytes ?? CHUNK,
        end - sent,
        b.holdAfter && !held ? b.holdAfter.bytes - sent : Infinity,
      );
      const piece = body ? body.subarray(sent, sent + n) : generated(total, sent, n);
      const ok = res.write(piece);
      sent += n;
      record.bytesWritten = sent;
      if (b.drip) await sleep(b.drip.everyMs);
      else if (!ok)
        await new Promise<void>((r) => {
          res.once('drain', r);
          res.once('close', r);
        });
    }
    if (b.cutAfter !== undefined)
      res.socket?.end(); // what was written is sent, then the connection ends
    else if (!record.aborted) res.end();
    void req;
  }

  const server = http.createServer((req, res) => {
    const path = new URL(req.url ?? '/', 'http://127.0.0.1').pathname;
    const method = req.method ?? 'GET';
    requests.push({ method, path, headers: req.headers });
    let done!: () => void;
    const record: ResponseRecord = {
      method,
      path,
      bytesWritten: 0,
      aborted: false,
      finished: new Promise<void>((r) => (done = r)),
    };
    records.push(record);
    res.on('close', () => {
      if (!res.writableFinished) record.aborted = true;
      done();
    });
    const route = routes.get(path);
    if (!route) {
      res.writeHead(404, { 'content-type': 'text/plain' }).end('not found');
      return;
    }
    if ('redirect' in route) {
      res.writeHead(route.status, { location: route.redirect }).end();
      return;
    }
    const body =
      route.body === undefined ? undefined : typeof route.body === 'string' ? Buffer.from(route.body) : route.body;
    const trueLength = body?.length ?? route.size ?? 0;
    const status = route.status ?? 200;
    const headers: Record<string, string | number> = { 'content-type': route.contentType ?? 'application/pdf' };
    if (method === 'HEAD') {
      const length = route.head?.contentLength ?? route.contentLength ?? trueLength;
      if (length !== 'none') headers['content-length'] = length;
      const answer = () => res.writeHead(route.head?.status ?? status, headers).end();
      if (route.head?.hold) void route.head.hold.then(answer, answer);
      else answer();
      return;
    }
    const range = /^bytes=0-0$/.test(String(req.headers.range ?? ''));
    if (range && status === 200) {
      headers['content-range'] = `bytes 0-0/${trueLength}`;
      headers['content-length'] = 1;
      res.writeHead(206, headers).end(body ? body.subarray(0, 1) : '%');
      return;
    }
    const length = route.contentLength ?? trueLength;
    if (length !== 'none') headers['content-length'] = length;
    res.writeHead(status, headers);
    if (status >= 300) {
      res.end();
      return;
    }
    writeBody(req, res, route, record).catch(() => res.destroy());
  });
  const listening = await listenOnLoopback(server);
  const { url, port } = listening;

  return {
    url,
    port,
    requests,
    serve(path, behaviour) {
      routes.set(path, behaviour);
    },
    redirect(path, to, status = 302) {
      routes.set(path, { redirect: to, status });
    },
    count: (path) => (path ? requests.filter((r) => r.path === path).length : requests.length),
    responses: (path) => (path ? records.filter((r) => r.path === path) : records),
    reset() {
      requests.length = 0;
      records.length = 0;
      routes = new Map();
    },
    async close() {
      await listening.close();
    },
  };
}
