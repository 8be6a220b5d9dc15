// The raw bytes of a delivery, read with a hard limit: the signature covers these exact
// bytes, and nothing is parsed before it has been checked. A body over the limit is
// refused from its Content-Length when it has one, else as soon as it grows past it.
// Every body being read also draws on one budget for all of them: the bytes are held before
// anyone knows whether they are signed, so many large uploads at once must not fill the memory.
// And each body has a deadline: GitHub gives up on a delivery not answered within 10 s, so a body
// still arriving after that is no delivery anyone waits for — only an upload holding the budget.
import type { IncomingMessage } from 'node:http';
import { ByteBudget } from '../byte-budget.js';

/**
 * 1 MiB: the deliveries the operator reads (pull_request, check_run, check_suite) are tens of
 * kilobytes; a pull request's body, the largest part, is at most 65,536 characters. GitHub caps
 * every payload at 25 MB, which is what the setting may go up to.
 */
export const defaultMaxBodyBytes = 1024 * 1024;

/** 32 MiB of bodies read at once, signed or not. */
export const defaultMaxBodyBytesInFlight = 32 * 1024 * 1024;

export class BodyBudgetError extends Error {
  constructor(readonly limitBytes: number) {
    super(`more than ${limitBytes} bytes of deliveries are being read at once`);
    this.name = 'BodyBudgetError';
  }
}

/** 10 s: how long GitHub waits for the answer to a delivery. */
export const defaultBodyDeadlineMs = 10_000;

export class BodyTimeoutError extends Error {
  constructor(readonly deadlineMs: number) {
    super(`the body did not arrive within ${deadlineMs} ms`);
    this.name = 'BodyTimeoutError';
  }
}

export class BodyTooLargeError extends Error {
  constructor(readonly limitBytes: number) {
    super(`body larger than ${limitBytes} bytes`);
    this.name = 'BodyTooLargeError';
  }
}

/**
 * The body's bytes, at most `limitBytes`, each drawn from `budget` until the body is whole or
 * refused; refused when it is not whole `deadlineMs` after the call.
 */
export function readWebhookBody(
  req: IncomingMessage,
  limitBytes: number,
  budget = new ByteBudget(Infinity),
  deadlineMs = defaultBodyDeadlineMs,
): Promise<Buffer> {
  const declared = Number(req.headers['content-length']);
  if (Number.isFinite(declared) && declared > limitBytes) return Promise.reject(new BodyTooLargeError(limitBytes));
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const deadline = setTimeout(() => refuse(new BodyTimeoutError(deadlineMs)), deadlineMs);
    const refuse = (err: Error) => {
      cleanup();
      chunks.length = 0;
      reject(err);
    };
    const onData = (chunk: Buffer) => {
      if (size + chunk.length > limitBytes) return refuse(new BodyTooLargeError(limitBytes));
      if (!budget.take(chunk.length)) return refuse(new BodyBudgetError(budget.limitBytes));
      size += chunk.length;
      chunks.push(chunk);
    };
    const onEnd = () => {
      const body = Buffer.concat(chunks, size);
      cleanup();
      resolve(body);
    };
    const onError = (err: Error) => refuse(err);
    const cleanup = () => {
      clearTimeout(deadline);
      budget.give(size);
      size = 0;
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
