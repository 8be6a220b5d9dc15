// The raw bytes of a delivery, read with a hard limit: the signature covers these exact
// bytes, and nothing is parsed before it has been checked. A body over the limit is
// refused from its Content-Length when it has one, else as soon as it grows past it.
import type { IncomingMessage } from 'node:http';

/** GitHub caps webhook payloads at 25 MB. */
export const defaultMaxBodyBytes = 25 * 1024 * 1024;

export class BodyTooLargeError extends Error {
  constructor(readonly limitBytes: number) {
    super(`body larger than ${limitBytes} bytes`);
    this.name = 'BodyTooLargeError';
  }
}

export function readWebhookBody(req: IncomingMessage, limitBytes: number): Promise<Buffer> {
  const declared = Number(req.headers['content-length']);
  if (Number.isFinite(declared) && declared > limitBytes) return Promise.reject(new BodyTooLargeError(limitBytes));
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size > limitBytes) {
        cleanup();
        chunks.length = 0;
        reject(new BodyTooLargeError(limitBytes));
        return;
      }
      chunks.push(chunk);
    };
    const onEnd = () => {
      cleanup();
      resolve(Buffer.concat(chunks, size));
    };
    const onError = (err: Error) => {
      cleanup();
      reject(err);
    };
    const cleanup = () => {
      req.off('data', onData);
      req.off('end', onEnd);
      req.off('error', onError);
      req.off('aborted', onAborted);
    };
    const onAborted = () => onError(new Error('the client closed the connection before sending the whole body'));
    req.on('data', onData);
    req.once('end', onEnd);
    req.once('error', onError);
    req.once('aborted', onAborted);
  });
}
