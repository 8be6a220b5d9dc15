// GitHub's transport through Octokit against real HTTP servers: what Octokit hands its callers
// (status, headers, data, errors) is what the global fetch gives, and what fetch promises about
// redirects, encodings, aborts and failed connections holds.
import assert from 'node:assert/strict';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import net, { type AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { gzipSync } from 'node:zlib';
import { Octokit } from '@octokit/rest';
import { RequestError } from '@octokit/request-error';
import { createHttpFetch, httpFetch } from './http-fetch.js';

type Seen = IncomingMessage & { body: string };
type Handler = (req: Seen, res: ServerResponse) => void;

/** A server whose next answers the test sets; it records every request it saw. */
async function startServer(): Promise<{ url: string; seen: Seen[]; handle: (h: Handler) => void; close: () => void }> {
  let handler: Handler = (_req, res) => res.end();
  const seen: Seen[] = [];
  const server: Server = createServer((req, res) => {
    let body = '';
    req.on('data', (chunk: Buffer) => (body += chunk.toString('utf8')));
    req.on('end', () => {
      const withBody = Object.assign(req, { body });
      seen.push(withBody);
      handler(withBody, res);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    seen,
    handle: (h) => (handler = h),
    close: () => (server.closeAllConnections(), server.close()),
  };
}

const quiet = { debug() {}, info() {}, warn() {}, error() {} };
const json = (res: ServerResponse, status: number, body: unknown, headers: Record<string, string | string[]> = {}) => {
  res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', ...headers });
  res.end(JSON.stringify(body));
};

describe('GitHub requests over node:http', () => {
  let server: Awaited<ReturnType<typeof startServer>>;
  let other: Awaited<ReturnType<typeof startServer>>;
  let octokit: Octokit;
  before(async () => {
    [server, other] = await Promise.all([startServer(), startServer()]);
    octokit = new Octokit({ auth: 'secret-token', baseUrl: server.url, log: quiet, request: { fetch: httpFetch } });
  });
  after(() => (server.close(), other.close()));

  test('a JSON answer: status, data and headers as Octokit gives them; the request as sent', async () => {
    server.handle((_req, res) =>
      json(res, 200, [{ id: 7, body: 'hello' }], { etag: 'W/"abc"', 'x-ratelimit-remaining': '4999', link: ['<a>; rel="next"'] }),
    );
    const answer = await octokit.rest.issues.listComments({ owner: 'o', repo: 'r', issue_number: 1, per_page: 100 });
    assert.equal(answer.status, 200);
    assert.deepEqual(answer.data, [{ id: 7, body: 'hello' }]);
    assert.equal(answer.headers.etag, 'W/"abc"');
    assert.equal(answer.headers['x-ratelimit-remaining'], '4999');
    assert.equal(answer.url, `${server.url}/repos/o/r/issues/1/comments?per_page=100`);
    const sent = server.seen.at(-1)!;
    assert.equal(sent.method, 'GET');
    assert.equal(sent.headers.authorization, 'token secret-token');
    assert.match(sent.headers['user-agent'] ?? '', /octokit/);
  });

  test('a POST sends its JSON body', async () => {
    server.handle((req, res) => json(res, 201, { id: 9, body: JSON.parse(req.body).body }));
    const created = await octokit.rest.issues.createComment({ owner: 'o', repo: 'r', issue_number: 1, body: 'préview ✓' });
    assert.equal(created.status, 201);
    assert.equal(created.data.body, 'préview ✓');
    assert.equal(server.seen.at(-1)!.headers['content-type'], 'application/json; charset=utf-8');
  });

  test("an error status becomes a RequestError with GitHub's message and the answer", async () => {
    server.handle((_req, res) => json(res, 404, { message: 'Not Found', documentation_url: 'https://docs.github.com' }));
    const err = await octokit.rest.repos.get({ owner: 'o', repo: 'missing' }).catch((e: unknown) => e);
    assert.ok(err instanceof RequestError);
    assert.equal(err.status, 404);
    assert.match(err.message, /^Not Found/);
    assert.deepEqual((err.response?.data as { message: string }).message, 'Not Found');
  });

  test('304 Not Modified is thrown as Octokit throws it (the conditional-request plugin reads it)', async () => {
    server.handle((_req, res) => (res.writeHead(304, { etag: 'W/"abc"' }), res.end()));
    const err = await octokit.rest.repos.get({ owner: 'o', repo: 'r', headers: { 'if-none-match': 'W/"abc"' } }).catch((e: unknown) => e);
    assert.ok(err instanceof RequestError);
    assert.equal(err.status, 304);
    assert.equal(server.seen.at(-1)!.headers['if-none-match'], 'W/"abc"');
  });

  test('a gzip-encoded answer is decoded', async () => {
    server.handle((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json', 'content-encoding': 'gzip' });
      res.end(gzipSync(JSON.stringify({ full_name: 'o/r' })));
    });
    assert.deepEqual((await octokit.rest.repos.get({ owner: 'o', repo: 'r' })).data, { full_name: 'o/r' });
  });

  test("a renamed repository: 301 is followed, the answer is the new location's", async () => {
    server.handle((req, res) =>
      req.url === '/repos/o/old' ? (res.writeHead(301, { location: '/repositories/42' }), res.end()) : json(res, 200, { id: 42 }),
    );
    const answer = await octokit.rest.repos.get({ owner: 'o', repo: 'old' });
    assert.deepEqual(answer.data, { id: 42 });
    assert.equal(answer.url, `${server.url}/repositories/42`);
  });

  test('307 repeats the method and body; 303 turns into a GET without one', async () => {
    server.handle((req, res) => {
      if (req.url === '/a') return (res.writeHead(307, { location: '/b' }), res.end());
      if (req.url === '/c') return (res.writeHead(303, { location: '/d' }), res.end());
      json(res, 200, { method: req.method, body: req.body });
    });
    const kept = await octokit.request('POST /a', { data: { x: 1 } });
    assert.deepEqual(kept.data, { method: 'POST', body: '{"x":1}' });
    const turned = await octokit.request('POST /c', { data: { x: 1 } });
    assert.deepEqual(turned.data, { method: 'GET', body: '' });
    assert.equal(server.seen.at(-1)!.headers['content-type'], undefined);
  });

  test('the token is not sent to another origin a redirect names', async () => {
    other.handle((req, res) => json(res, 200, { authorization: req.headers.authorization ?? null }));
    server.handle((_req, res) => (res.writeHead(302, { location: `${other.url}/elsewhere` }), res.end()));
    const answer = await octokit.request('GET /download');
    assert.deepEqual(answer.data, { authorization: null });
    assert.equal(server.seen.at(-1)!.headers.authorization, 'token secret-token');
  });

  test("redirect 'manual' answers with the redirect itself; 'error' refuses it", async () => {
    server.handle((_req, res) => (res.writeHead(302, { location: '/elsewhere' }), res.end()));
    const manual = await httpFetch(`${server.url}/moved`, { redirect: 'manual' });
    assert.equal(manual.status, 302);
    assert.equal(manual.headers.get('location'), '/elsewhere');
    const refused = await httpFetch(`${server.url}/moved`, { redirect: 'error' }).catch((e: unknown) => e);
    assert.ok(refused instanceof TypeError);
    assert.match((refused.cause as Error).message, /redirect to \/elsewhere refused/);
  });

  test('a redirect loop ends after 20 with a clear error', async () => {
    const before = server.seen.length;
    server.handle((_req, res) => (res.writeHead(302, { location: '/loop' }), res.end()));
    const err = await octokit.request('GET /loop').catch((e: unknown) => e);
    assert.ok(err instanceof RequestError);
    assert.equal(err.status, 500);
    assert.match(err.message, /redirect count exceeded/);
    assert.equal(server.seen.length - before, 21);
  });

  test('a server that cannot be reached: a RequestError naming why', async () => {
    const closed = await startServer();
    closed.close();
    const unreachable = new Octokit({ baseUrl: closed.url, log: quiet, request: { fetch: httpFetch } });
    const err = await unreachable.rest.repos.get({ owner: 'o', repo: 'r' }).catch((e: unknown) => e);
    assert.ok(err instanceof RequestError);
    assert.equal(err.status, 500);
    assert.match(err.message, /ECONNREFUSED/);
  });

  test('an aborted request rejects with an AbortError', async () => {
    server.handle(() => {}); // never answers
    const controller = new AbortController();
    const pending = octokit.request('GET /slow', { request: { signal: controller.signal } });
    setTimeout(() => controller.abort(), 50);
    const err = await pending.catch((e: unknown) => e);
    assert.ok(err instanceof Error);
    assert.equal(err.name, 'AbortError');
  });

  test('headers read as fetch reads them: any case, repeated ones joined', async () => {
    server.handle((_req, res) => {
      res.setHeader('X-Custom', ['a', 'b']);
      res.setHeader('Content-Type', 'text/plain; charset=utf-8');
      res.end('plain');
    });
    const response = await httpFetch(`${server.url}/h`);
    assert.equal(response.headers.get('x-custom'), 'a, b');
    assert.equal(response.headers.get('X-CUSTOM'), 'a, b');
    assert.equal(response.headers.get('absent'), null);
    assert.deepEqual(
      [...response.headers].map(([name]) => name).filter((name) => name.startsWith('x-') || name === 'content-type'),
      ['content-type', 'x-custom'],
    );
    assert.equal(await response.text(), 'plain');
    assert.equal(response.ok, true);
    assert.equal(response.redirected, false);
  });

  test('a bodiless 304, 204 or HEAD answer that names a content coding is read as empty', async () => {
    server.handle((req, res) => {
      res.writeHead(req.method === 'DELETE' ? 204 : req.url === '/cached' ? 304 : 200, { 'content-encoding': 'gzip', etag: 'W/"e"' });
      res.end();
    });
    const notModified = await octokit.request('GET /cached').catch((e: unknown) => e);
    assert.ok(notModified instanceof RequestError);
    assert.equal(notModified.status, 304);
    assert.equal((await octokit.request('DELETE /thing')).status, 204);
    assert.equal((await octokit.request('HEAD /thing')).status, 200);
  });

  test('a JSON answer that starts with a byte order mark is parsed', async () => {
    server.handle((_req, res) => (res.writeHead(200, { 'content-type': 'application/json' }), res.end('\uFEFF{"id":42}')));
    assert.deepEqual((await octokit.request('GET /bom')).data, { id: 42 });
  });

  test('bytes are sent as a body, from an ArrayBuffer or a view alike', async () => {
    server.handle((req, res) => json(res, 200, { body: req.body }));
    const bytes = new TextEncoder().encode('raw');
    for (const body of [bytes.buffer, new DataView(bytes.buffer)]) {
      assert.deepEqual(await (await httpFetch(`${server.url}/bytes`, { method: 'POST', body })).json(), { body: 'raw' });
    }
  });

  test('a body that decodes to more than 64 MiB is refused', async () => {
    server.handle((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json', 'content-encoding': 'gzip' });
      res.end(gzipSync(Buffer.alloc(65 * 1024 * 1024)));
    });
    const err = await octokit.request('GET /bomb').catch((e: unknown) => e);
    assert.ok(err instanceof RequestError);
    assert.equal(err.status, 500);
    assert.match(err.message, /Cannot create a Buffer larger than|buffer|length/i);
  });
});

describe('GitHub requests that would never end', () => {
  /** A TCP server that answers each connection with `onConnection`. */
  async function rawServer(onConnection: (socket: net.Socket) => void): Promise<{ port: number; close: () => void }> {
    const sockets = new Set<net.Socket>();
    const server = net.createServer((socket) => {
      sockets.add(socket);
      socket.on('error', () => {});
      onConnection(socket);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return { port: (server.address() as AddressInfo).port, close: () => (sockets.forEach((s) => s.destroy()), server.close()) };
  }
  const causeOf = async (pending: Promise<unknown>) =>
    pending.then(
      () => 'answered',
      (err: Error) => (err.cause as Error | undefined)?.message ?? err.message,
    );

  test('a 101 nobody upgrades to rejects instead of hanging', async () => {
    const server = await rawServer((s) =>
      s.once('data', () => s.write('HTTP/1.1 101 Switching Protocols\r\nUpgrade: x\r\nConnection: Upgrade\r\n\r\n')),
    );
    after(server.close);
    assert.equal(await causeOf(httpFetch(`http://127.0.0.1:${server.port}/`)), 'connection closed before an answer');
  });

  test('a TLS handshake that never completes is given up at the connect limit', async () => {
    const server = await rawServer(() => {}); // accepts TCP, never says a word
    after(server.close);
    const started = performance.now();
    const cause = await causeOf(createHttpFetch({ connectTimeoutMs: 200 })(`https://127.0.0.1:${server.port}/`));
    assert.equal(cause, 'no connection within 200 ms');
    assert.ok(performance.now() - started < 2_000);
  });

  test('headers trickled a byte at a time are cut off at the headers limit', async () => {
    const server = await rawServer((s) =>
      s.once('data', () => {
        s.write('HTTP/1.1 200 OK\r\nX-Pad: ');
        const drip = setInterval(() => s.write('x'), 50);
        s.on('close', () => clearInterval(drip));
      }),
    );
    after(server.close);
    const cause = await causeOf(createHttpFetch({ headersTimeoutMs: 300, idleTimeoutMs: 10_000 })(`http://127.0.0.1:${server.port}/`));
    assert.equal(cause, 'no answer within 300 ms');
  });

  test("a pooled connection idle past the keep-alive limit is not reused, so a server's idle close never meets a request", async () => {
    const lastAnswered = new WeakMap<net.Socket, number>();
    // Closes a connection that comes back after 400 ms of silence, as a load balancer's idle timeout would, without saying so.
    const server = createServer({ keepAliveTimeout: 0 }, (req, res) => {
      if (performance.now() - (lastAnswered.get(req.socket) ?? performance.now()) > 400) return void req.socket.destroy();
      req.resume();
      req.on('end', () => (res.end(String(req.socket.remotePort)), lastAnswered.set(req.socket, performance.now())));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    after(() => (server.closeAllConnections(), server.close()));
    const fetcher = createHttpFetch({ keepAliveMs: 200 });
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
    const first = await (await fetcher(url, { method: 'POST', body: 'x' })).text();
    await new Promise((resolve) => setTimeout(resolve, 600));
    const second = await fetcher(url, { method: 'POST', body: 'x' });
    assert.equal(second.status, 200);
    assert.notEqual(await second.text(), first, 'a new connection');
  });
});
