// One server-sent-events connection: the headers a stream needs through a proxy (no caching,
// no buffering), a comment now and then so that idle connections (kubectl port-forward, load
// balancers) are not cut, and a way for the server to end it (a server closes only once every
// connection has, and a stream never ends by itself).
import type { IncomingMessage, ServerResponse } from 'node:http';

export interface EventStreamClient {
  /** Sends one event; `data` is serialised as JSON (one line). */
  send(event: string, data: unknown, id?: string): void;
  close(): void;
  readonly closed: boolean;
}

export function openEventStream(
  req: IncomingMessage,
  res: ServerResponse,
  options: { heartbeatMs?: number; retryMs?: number; maxBufferedBytes?: number; onClose?: () => void } = {},
): EventStreamClient {
  let closed = false;
  res.writeHead(200, {
    'content-type': 'text/event-stream; charset=utf-8',
    'cache-control': 'no-store',
    connection: 'keep-alive',
    'x-accel-buffering': 'no',
  });
  res.write(`retry: ${options.retryMs ?? 3000}\n\n`);
  const heartbeat = setInterval(() => res.write(': keep-alive\n\n'), options.heartbeatMs ?? 20_000);
  heartbeat.unref();
  const end = () => {
    if (closed) return;
    closed = true;
    clearInterval(heartbeat);
    options.onClose?.();
  };
  const close = () => {
    end();
    res.end();
  };
  req.on('close', end);
  res.on('error', end);
  return {
    get closed() {
      return closed;
    },
    send(event, data, id) {
      if (closed) return;
      // A reader that stopped reading is let go rather than buffered for: it reconnects and catches up.
      if (res.writableLength > (options.maxBufferedBytes ?? 1 << 20)) {
        close();
        return;
      }
      res.write(`${id !== undefined ? `id: ${id}\n` : ''}event: ${event}\ndata: ${JSON.stringify(data)}\n\n`);
    },
    close,
  };
}
