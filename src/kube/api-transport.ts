// How a request reaches the API server: HTTP/2 where the server offers it (http2-transport.ts),
// HTTP/1.1 otherwise (http1-transport.ts). The client builds the request and reads the answer the
// same way over either.
import type { OutgoingHttpHeaders } from 'node:http';
import type { Readable } from 'node:stream';
import { TransientError } from './errors.js';

export interface ApiCall {
  method: string;
  url: URL;
  headers: OutgoingHttpHeaders;
  body?: string;
  /** Idle timeout in ms until the answer's body ends (0: none). */
  timeoutMs: number;
  signal?: AbortSignal;
  /** `GET /api/v1/...`, to name the call in errors. */
  what: string;
}

/** An answer whose status and headers have arrived; its body is still to be read. */
export interface ApiAnswer {
  status: number;
  contentType?: string;
  /** The content-length header: a body that ends with fewer bytes was cut short. */
  contentLength?: number;
  body: Readable;
  /** Lifts the idle timeout: the body may stay quiet for as long as it likes (a watch). */
  untimed(): void;
  /** Ends the request (its stream, or its HTTP/1.1 socket). */
  close(): void;
}

export interface ApiTransport {
  /** Resolves when the answer's headers arrive; rejects with the network's error. */
  send(call: ApiCall): Promise<ApiAnswer>;
  /** Closes every connection. */
  close(): void;
}

/** The error of a call whose answer went quiet for its whole idle timeout. */
export function noAnswerError(call: ApiCall): TransientError {
  return new TransientError(`${call.what}: no answer within ${call.timeoutMs} ms`, 0, 'Timeout');
}
