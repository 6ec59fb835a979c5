import type { Server } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

// How the stand-ins listen: on a free port of 127.0.0.1, with a close that ends the connections
// still open (kept alive by a client, or a response the stand-in is holding) instead of waiting.

export interface Listening {
  /** http://127.0.0.1:<port> */
  url: string;
  port: number;
  /** Ends every open connection, then closes the server. */
  close(): Promise<void>;
}

export async function listenOnLoopback(server: Server): Promise<Listening> {
  const sockets = new Set<Socket>();
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    async close() {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** Lets go of every response a stand-in is holding back for a test, and forgets them. */
export function releaseAll(releases: Set<() => void>): void {
  for (const release of releases) release();
  releases.clear();
}
