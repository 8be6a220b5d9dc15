// GitHub's requests without a proxy: a fetch over node:http(s) with kept-alive connections,
// answering with the part of a Response that Octokit reads (status, statusText, url, headers,
// the body as text or bytes; no `body` stream, so not `parseSuccessResponseBody: false`).
// Octokit accepts any fetch (`request.fetch`). In a burst of pull requests (npm run bench, 200 PRs)
// GitHub's requests were a third of the operator's CPU, and the global fetch (undici's: its WHATWG
// streams, header validation and request objects) about 40 % of that; over node:http, GitHub's
// share fell to 15 %. What it keeps of fetch: redirects followed (at most 20; 303, and 301/302 after a POST,
// become a GET without a body; the Authorization header is not sent to another origin), gzip,
// deflate and brotli bodies decoded (up to 64 MiB), a leading BOM dropped, idle pooled connections
// closed after 4 s (a server's own idle close then never meets a request), limits on connecting
// (10 s), on the answer's headers (300 s) and on silence (300 s), an AbortError when the signal
// aborts and a TypeError("fetch failed") whose cause says why when the network fails.
// It asks for no compression: GitHub's JSON answers are small, and decoding them costs CPU.
import http, { type IncomingHttpHeaders, type IncomingMessage } from 'node:http';
import https from 'node:https';
import { brotliDecompressSync, gunzipSync, inflateSync } from 'node:zlib';

export interface HttpFetchLimits {
  /** A new connection (TCP and TLS) must be up within this (default 10 s, as undici's). */
  connectTimeoutMs?: number;
  /** The answer's status and headers must have arrived within this after the request went out (default 300 s). */
  headersTimeoutMs?: number;
  /** A connection silent this long is given up (default 300 s). */
  idleTimeoutMs?: number;
  /** A pooled connection idle this long is closed (default 4 s, as undici's). */
  keepAliveMs?: number;
}

/** What this fetch answers: the members of a Response that Octokit's request reads. */
export interface FetchedResponse {
  status: number;
  statusText: string;
  ok: boolean;
  redirected: boolean;
  url: string;
  headers: ResponseHeaders;
  text(): Promise<string>;
  json(): Promise<unknown>;
  arrayBuffer(): Promise<ArrayBuffer>;
}

export type HttpFetch = (input: string | URL, init?: RequestInit) => Promise<FetchedResponse>;

interface Sent {
  url: URL;
  method: string;
  headers: Record<string, string>;
  body?: string | Uint8Array;
}

const maxRedirects = 20;
const maxDecodedBytes = 64 * 1024 * 1024;

/** A fetch for Octokit over node:http(s), with its own connection pools. */
export function createHttpFetch(limits: HttpFetchLimits = {}): HttpFetch {
  const keepAlive = { keepAlive: true, timeout: limits.keepAliveMs ?? 4_000 };
  const agents = { 'http:': new http.Agent(keepAlive), 'https:': new https.Agent(keepAlive) };
  const send = sender(agents, {
    connectTimeoutMs: limits.connectTimeoutMs ?? 10_000,
    headersTimeoutMs: limits.headersTimeoutMs ?? 300_000,
    idleTimeoutMs: limits.idleTimeoutMs ?? 300_000,
  });
  return async (input, init = {}) => {
    let sent: Sent = {
      url: new URL(input),
      method: (init.method ?? 'GET').toUpperCase(),
      headers: plainHeaders(init.headers),
      body: plainBody(init.body),
    };
    for (let redirects = 0; ; redirects++) {
      const response = await send(sent, init.signal ?? undefined);
      const location = response.headers.location;
      if (!isRedirect(response.statusCode) || !location || init.redirect === 'manual') return answer(response, sent.url, redirects > 0);
      response.resume();
      if (init.redirect === 'error') throw failed(`redirect to ${location} refused`);
      if (redirects === maxRedirects) throw failed('redirect count exceeded');
      sent = redirected(sent, response.statusCode ?? 0, new URL(location, sent.url));
    }
  };
}

/** The process's fetch for GitHub: one pool of connections per protocol. */
export const httpFetch: HttpFetch = createHttpFetch();

type Agents = Record<'http:' | 'https:', http.Agent>;

/** Sends one request and resolves with its answer's head, within the limits. */
function sender(agents: Agents, limits: Required<Omit<HttpFetchLimits, 'keepAliveMs'>>) {
  return (sent: Sent, signal: AbortSignal | undefined): Promise<IncomingMessage> => {
    const protocol = sent.url.protocol === 'https:' ? 'https:' : sent.url.protocol === 'http:' ? 'http:' : undefined;
    if (!protocol) return Promise.reject(failed(`unsupported protocol ${sent.url.protocol}`));
    return new Promise((resolve, reject) => {
      const request = (protocol === 'https:' ? https : http).request(sent.url, {
        method: sent.method,
        headers: sent.headers,
        agent: agents[protocol],
        signal,
      });
      const giveUp = (why: string) => request.destroy(new Error(why));
      const headersTimer = setTimeout(() => giveUp(`no answer within ${limits.headersTimeoutMs} ms`), limits.headersTimeoutMs);
      request.setTimeout(limits.idleTimeoutMs, () => giveUp('the connection went silent'));
      request.once('socket', (socket) => {
        // The idle limit counts from the connection: a new one must come up (TCP and TLS) first.
        if (request.reusedSocket) return;
        const connectTimer = setTimeout(() => giveUp(`no connection within ${limits.connectTimeoutMs} ms`), limits.connectTimeoutMs);
        socket.once(protocol === 'https:' ? 'secureConnect' : 'connect', () => clearTimeout(connectTimer));
        socket.once('close', () => clearTimeout(connectTimer));
      });
      let settled = false;
      const settle = () => ((settled = true), clearTimeout(headersTimer));
      request.once('response', (response) => (settle(), resolve(response)));
      request.once('error', (err) => (settle(), reject(err.name === 'AbortError' ? err : failed(err))));
      // Closed without an answer or an error (a 101 nobody upgrades). Every request closes: the error
      // (two stack traces) is made only for one that did not settle.
      request.once('close', () => settled || (settle(), reject(failed('connection closed before an answer'))));
      request.end(sent.body);
    });
  };
}

function failed(cause: Error | string): TypeError {
  return new TypeError('fetch failed', { cause: typeof cause === 'string' ? new Error(cause) : cause });
}

/** The request a redirect asks for, as fetch makes it. */
function redirected(sent: Sent, status: number, to: URL): Sent {
  const headers = { ...sent.headers };
  if (to.origin !== sent.url.origin) delete headers.authorization;
  const asGet = status === 303 ? sent.method !== 'HEAD' : (status === 301 || status === 302) && sent.method === 'POST';
  if (!asGet) return { ...sent, url: to, headers };
  for (const name of ['content-type', 'content-length', 'content-encoding', 'content-language', 'content-location']) delete headers[name];
  return { url: to, method: 'GET', headers };
}

/** The whole answer read, decoded, and wrapped as a Response. */
async function answer(response: IncomingMessage, url: URL, redirected: boolean): Promise<FetchedResponse> {
  const body = decoded(await readAll(response), response.headers['content-encoding']);
  const status = response.statusCode ?? 0;
  // fetch's text() drops a byte order mark.
  const text = () => body.toString('utf8').replace(/^\uFEFF/, '');
  return {
    status,
    statusText: response.statusMessage ?? '',
    ok: status >= 200 && status < 300,
    redirected,
    url: url.href,
    headers: new ResponseHeaders(response.headers),
    text: async () => text(),
    json: async () => JSON.parse(text()),
    arrayBuffer: async () => body.buffer.slice(body.byteOffset, body.byteOffset + body.byteLength) as ArrayBuffer,
  };
}

function readAll(response: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    response.on('data', (chunk: Buffer) => chunks.push(chunk));
    response.once('end', () => resolve(Buffer.concat(chunks)));
    response.once('error', (err) => reject(failed(err)));
    response.once('aborted', () => reject(failed('connection closed mid-answer')));
  });
}

/** The body as sent before its content coding (a 304, 204 or HEAD answer may name one and carry nothing). */
function decoded(body: Buffer, encoding: string | undefined): Buffer {
  if (body.length === 0) return body;
  const limit = { maxOutputLength: maxDecodedBytes };
  try {
    switch (encoding?.trim().toLowerCase()) {
      case 'gzip':
      case 'x-gzip':
        return gunzipSync(body, limit);
      case 'deflate':
        return inflateSync(body, limit);
      case 'br':
        return brotliDecompressSync(body, limit);
      default:
        return body;
    }
  } catch (err) {
    throw failed(err as Error);
  }
}

/**
 * A response's headers as fetch's Headers reads them (names in lower case, repeated ones joined
 * by ", ", iterated in name order), without its per-header validation: node's parser has checked them.
 */
export class ResponseHeaders implements Iterable<[string, string]> {
  private readonly values = new Map<string, string>();

  constructor(headers: IncomingHttpHeaders) {
    for (const [name, value] of Object.entries(headers)) {
      if (value !== undefined) this.values.set(name, Array.isArray(value) ? value.join(', ') : value);
    }
  }

  get(name: string): string | null {
    return this.values.get(name.toLowerCase()) ?? null;
  }

  has(name: string): boolean {
    return this.values.has(name.toLowerCase());
  }

  forEach(callback: (value: string, name: string) => void): void {
    for (const [name, value] of this) callback(value, name);
  }

  *[Symbol.iterator](): IterableIterator<[string, string]> {
    yield* [...this.values].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  }
}

/** The request's headers with lower-case names (Octokit passes a plain object; anything else goes through Headers). */
function plainHeaders(headers: RequestInit['headers']): Record<string, string> {
  const result: Record<string, string> = {};
  if (!headers) return result;
  if (isRecord(headers)) {
    for (const [name, value] of Object.entries(headers)) result[name.toLowerCase()] = String(value);
  } else {
    new Headers(headers).forEach((value, name) => (result[name] = value));
  }
  return result;
}

const isRecord = (value: NonNullable<RequestInit['headers']>): value is Record<string, string> =>
  Object.getPrototypeOf(value) === Object.prototype || Object.getPrototypeOf(value) === null;

function plainBody(body: RequestInit['body']): string | Uint8Array | undefined {
  if (body === undefined || body === null) return undefined;
  if (typeof body === 'string' || body instanceof Uint8Array) return body;
  if (body instanceof ArrayBuffer) return new Uint8Array(body);
  if (ArrayBuffer.isView(body)) return new Uint8Array(body.buffer, body.byteOffset, body.byteLength);
  throw new TypeError(`this fetch sends string and byte bodies only, not ${Object.prototype.toString.call(body)}`);
}

const isRedirect = (status: number | undefined) => status === 301 || status === 302 || status === 303 || status === 307 || status === 308;
