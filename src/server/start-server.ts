// Listening with the timeouts a public endpoint needs: a client that trickles its request
// cannot hold a connection (and a body buffer) forever.
import { createServer, type RequestListener, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface ListenOptions {
  /** Default 127.0.0.1; `0.0.0.0` in a pod. */
  host?: string;
  /** Default 0: any free port. */
  port?: number;
  /** The whole request must arrive within this (default 30 s; GitHub sends at most 25 MB). */
  requestTimeoutMs?: number;
}

export interface RunningServer {
  server: Server;
  /** e.g. `http://127.0.0.1:43117`. */
  url: string;
  port: number;
  /** Stops accepting, ends idle connections, and resolves when every in-flight request is answered. */
  close(): Promise<void>;
}

export async function startServer(listener: RequestListener, options: ListenOptions = {}): Promise<RunningServer> {
  const host = options.host ?? '127.0.0.1';
  const server = createServer(listener).listen(options.port ?? 0, host);
  await new Promise<void>((resolve, reject) => {
    server.once('listening', resolve);
    server.once('error', reject);
  });
  server.requestTimeout = options.requestTimeoutMs ?? 30_000;
  server.headersTimeout = Math.min(server.requestTimeout, 20_000);
  const { port } = server.address() as AddressInfo;
  const shown = host.includes(':') ? `[${host}]` : host;
  return {
    server,
    port,
    url: `http://${shown === '0.0.0.0' ? '127.0.0.1' : shown}:${port}`,
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.close((err) => (err ? reject(err) : resolve()));
        server.closeIdleConnections();
      }),
  };
}
