// GitHub's transport through Octokit against real HTTP servers: what Octokit hands its callers
// (status, headers, data, errors) is what the global fetch gives, and what fetch promises about
// redirects, encodings, aborts and failed connections holds.
import assert from 'node:assert/strict';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { gzipSync } from 'node:zlib';
import { Octokit } from '@octokit/rest';
import { RequestError } from '@octokit/request-error';
import { httpFetch } from './http-fetch.js';

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
});
