// GitHub's requests without a proxy: a fetch over node:http(s) with kept-alive connections,
// answering with the part of a Response that Octokit reads (status, url, headers, the body as
// text or bytes). Octokit accepts any fetch (`request.fetch`); the global one (undici's) costs
// about twice the CPU per request — its WHATWG streams, header validation and request objects —
// which, at seven requests per preview, was a quarter of the operator's CPU in a burst of pull
// requests (npm run bench). What it does as fetch does: follows redirects (at most 20; 303, and
// 301/302 after a POST, become a GET without a body; the Authorization header is not sent to
// another origin), decodes gzip, deflate and brotli bodies, gives up on a connection silent for
// 300 s, throws an AbortError when the signal aborts and a TypeError("fetch failed") whose cause
// says why when the network fails.
import http, { type IncomingHttpHeaders, type IncomingMessage } from 'node:http';
import https from 'node:https';
import { brotliDecompressSync, gunzipSync, inflateSync } from 'node:zlib';

const maxRedirects = 20;
const idleTimeoutMs = 300_000;
const agents = { 'http:': new http.Agent({ keepAlive: true }), 'https:': new https.Agent({ keepAlive: true }) };

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

interface Sent {
  url: URL;
  method: string;
  headers: Record<string, string>;
  body?: string | Uint8Array;
}

/** A fetch for Octokit over node:http(s). */
export async function httpFetch(input: string | URL, init: RequestInit = {}): Promise<FetchedResponse> {
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
    if (init.redirect === 'error') throw new TypeError('fetch failed', { cause: new Error(`redirect to ${location} refused`) });
    if (redirects === maxRedirects) throw new TypeError('fetch failed', { cause: new Error('redirect count exceeded') });
    sent = redirected(sent, response.statusCode ?? 0, new URL(location, sent.url));
  }
}

function send(sent: Sent, signal: AbortSignal | undefined): Promise<IncomingMessage> {
  const protocol = sent.url.protocol === 'https:' ? 'https:' : sent.url.protocol === 'http:' ? 'http:' : undefined;
  if (!protocol) return Promise.reject(new TypeError('fetch failed', { cause: new Error(`unsupported protocol ${sent.url.protocol}`) }));
  return new Promise((resolve, reject) => {
    const request = (protocol === 'https:' ? https : http).request(sent.url, {
      method: sent.method,
      headers: sent.headers,
      agent: agents[protocol],
      signal,
    });
    request.setTimeout(idleTimeoutMs, () => request.destroy(new Error(`no answer within ${idleTimeoutMs} ms`)));
    request.once('response', resolve);
    request.once('error', (err) => reject(err.name === 'AbortError' ? err : new TypeError('fetch failed', { cause: err })));
    request.end(sent.body);
  });
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
  return {
    status,
    statusText: response.statusMessage ?? '',
    ok: status >= 200 && status < 300,
    redirected,
    url: url.href,
    headers: new ResponseHeaders(response.headers),
    text: async () => body.toString('utf8'),
    json: async () => JSON.parse(body.toString('utf8')),
    arrayBuffer: async () => body.buffer.slice(body.byteOffset, body.byteOffset + body.byteLength) as ArrayBuffer,
  };
}

function readAll(response: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    response.on('data', (chunk: Buffer) => chunks.push(chunk));
    response.once('end', () => resolve(Buffer.concat(chunks)));
    response.once('error', (err) => reject(new TypeError('fetch failed', { cause: err })));
    response.once('aborted', () => reject(new TypeError('fetch failed', { cause: new Error('connection closed mid-answer') })));
  });
}

function decoded(body: Buffer, encoding: string | undefined): Buffer {
  switch (encoding?.trim().toLowerCase()) {
    case 'gzip':
    case 'x-gzip':
      return gunzipSync(body);
    case 'deflate':
      return inflateSync(body);
    case 'br':
      return brotliDecompressSync(body);
    default:
      return body;
  }
}

/**
 * A response's headers as fetch's Headers reads them (names in lower case, repeated ones joined
 * by ", "), without its per-header validation: node's parser has checked them already.
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
  throw new TypeError(`this fetch sends string and byte bodies only, not ${Object.prototype.toString.call(body)}`);
}

const isRedirect = (status: number | undefined) => status === 301 || status === 302 || status === 303 || status === 307 || status === 308;
