import http from 'node:http';
import { listenOnLoopback } from './loopback-server.ts';

// A loopback pass-through in front of the local S3 (fauxqs) that records every request's method and
// path with query, so a test can see when the service writes what (a multipart upload's parts while
// its download is still arriving). Point the app's S3_ENDPOINT at `url`.

export interface S3Recorder {
  url: string;
  /** `PUT /bucket/key?partNumber=2&uploadId=…`, in arrival order. */
  requests: string[];
  close(): Promise<void>;
}

export async function startS3Recorder(target: string): Promise<S3Recorder> {
  const upstream = new URL(target);
  const requests: string[] = [];
  const server = http.createServer((req, res) => {
    requests.push(`${req.method} ${req.url}`);
    const forwarded = http.request(
      { host: upstream.hostname, port: upstream.port, method: req.method, path: req.url, headers: req.headers },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      },
    );
    forwarded.on('error', () => res.destroy());
    req.pipe(forwarded);
  });
  const listening = await listenOnLoopback(server);
  return {
    url: listening.url,
    requests,
    close: listening.close,
  };
}
