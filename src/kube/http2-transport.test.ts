// The API client's transport against local TLS servers (a throwaway certificate made with the
// openssl command): HTTP/2 where the server offers it, one connection for every request (another
// when the server's stream limit is full); HTTP/1.1 where it does not; and what a connection's end,
// a GOAWAY, a refused or reset stream, a handshake that hangs or a silent peer do to the requests
// and watches on it. The real API server speaks HTTP/2 to the client in
// test/integration/kube-client.test.ts.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import http2, { type Http2SecureServer, type ServerHttp2Stream } from 'node:http2';
import https from 'node:https';
import net, { type AddressInfo, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { KubeClient } from './client.js';
import { TransientError } from './errors.js';
import { loadKubeConfig } from './kube-config.js';
import { kubeconfigText } from '../../test/support/kubeconfig-text.js';
import { selfSigned } from '../../test/support/test-pki.js';
import { tcpRelay, type TcpRelay } from '../../test/support/tcp-relay.js';

const dir = mkdtempSync(path.join(tmpdir(), 'http2-transport-'));
let cert: string;
let key: string;
const closers: (() => void)[] = [];
after(() => {
  for (const close of closers) close();
  rmSync(dir, { recursive: true, force: true });
});

before(() => {
  ({ cert, key } = selfSigned(dir, 'localhost', 'localhost', ['subjectAltName=IP:127.0.0.1']));
});

type Handler = (stream: ServerHttp2Stream, headers: http2.IncomingHttpHeaders) => void;

/** An HTTP/2-only TLS server: TLS connections counted, each stream to `handler`. */
async function h2Server(handler: Handler): Promise<{ url: string; connections: () => number; server: Http2SecureServer }> {
  const server = http2.createSecureServer({ cert, key });
  let connections = 0;
  server.on('secureConnection', () => connections++);
  server.on('stream', (stream, headers) => {
    stream.on('error', () => {}); // a client's reset
    handler(stream, headers);
  });
  const sessions = new Set<http2.ServerHttp2Session>();
  server.on('session', (s) => sessions.add(s));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  closers.push(() => {
    for (const s of sessions) s.destroy();
    server.close();
  });
  return { url: `https://127.0.0.1:${(server.address() as AddressInfo).port}`, connections: () => connections, server };
}

function answer(stream: ServerHttp2Stream, body: unknown): void {
  stream.respond({ ':status': 200, 'content-type': 'application/json' });
  stream.end(JSON.stringify(body));
}

let configs = 0;
/** A kubeconfig for `server` trusting the test certificate, with a bearer token. */
function kubeconfigFile(server: string): string {
  const file = path.join(dir, `kubeconfig-${configs++}`);
  const caData = Buffer.from(cert).toString('base64');
  writeFileSync(file, kubeconfigText(`server: ${server}\ncertificate-authority-data: ${caData}`, 'token: t0ken'));
  return file;
}

async function clientFor(server: string, requestTimeoutMs = 30_000): Promise<KubeClient> {
  const client = new KubeClient(await loadKubeConfig({ env: {}, path: kubeconfigFile(server) }), { requestTimeoutMs });
  closers.push(() => client.close());
  return client;
}

describe('API client transport: HTTP/2', () => {
  it('forty requests at once share one TLS connection, with the kubeconfig credentials on each', async () => {
    const seen: string[] = [];
    const server = await h2Server((stream, headers) => {
      seen.push(String(headers.authorization));
      setTimeout(() => answer(stream, { path: headers[':path'] }), 20);
    });
    const client = await clientFor(server.url);
    const answers = await Promise.all(Array.from({ length: 40 }, (_, i) => client.request<{ path: string }>({ path: `/r/${i}` })));
    assert.deepEqual(
      answers.map((a) => a.path),
      Array.from({ length: 40 }, (_, i) => `/r/${i}`),
    );
    assert.equal(server.connections(), 1);
    assert.deepEqual(new Set(seen), new Set(['Bearer t0ken']));
  });

  it('a server whose certificate the kubeconfig does not trust never sees a request, nor the token', async () => {
    const impostor = selfSigned(dir, 'impostor', 'localhost', ['subjectAltName=IP:127.0.0.1']);
    const server = http2.createSecureServer({ cert: impostor.cert, key: impostor.key });
    const streams: string[] = [];
    server.on('stream', (stream, headers) => {
      streams.push(String(headers.authorization));
      answer(stream, 'served');
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    closers.push(() => server.close());
    const client = await clientFor(`https://127.0.0.1:${(server.address() as AddressInfo).port}`);
    await assert.rejects(client.request({ path: '/api' }), /self.signed|unable to verify/i);
    assert.deepEqual(streams, []);
  });

  it('a server without HTTP/2 is spoken to over HTTP/1.1, and not asked again', async () => {
    let connections = 0;
    const versions = new Set<string>();
    const server = https.createServer({ cert, key }, (req, res) => {
      versions.add(req.httpVersion);
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify({ path: req.url }));
    });
    server.on('secureConnection', () => connections++);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    closers.push(() => {
      server.closeAllConnections();
      server.close();
    });
    const client = await clientFor(`https://127.0.0.1:${(server.address() as AddressInfo).port}`);
    for (let i = 0; i < 5; i++) assert.deepEqual(await client.request({ path: `/r/${i}` }), { path: `/r/${i}` });
    assert.deepEqual([...versions], ['1.1']);
    // The handshake that found no h2 (the server may not count it: the client leaves at once), then one kept-alive connection.
    assert.ok(connections <= 2, `${connections} TLS connections for 5 requests`);
  });

  it('GOAWAY: the request in flight gets its answer, the next one a new connection', async () => {
    const server = await h2Server((stream, headers) => {
      if (headers[':path'] === '/slow') setTimeout(() => answer(stream, 'slow'), 300);
      else if (headers[':path'] === '/bye') {
        answer(stream, 'bye');
        stream.session?.goaway(http2.constants.NGHTTP2_NO_ERROR, stream.id);
      } else answer(stream, 'fresh');
    });
    const client = await clientFor(server.url);
    const slow = client.request({ path: '/slow' });
    assert.equal(await client.request({ path: '/bye' }), 'bye');
    await new Promise((r) => setTimeout(r, 50));
    assert.equal(await client.request({ path: '/after' }), 'fresh');
    assert.equal(await slow, 'slow');
    assert.equal(server.connections(), 2);
  });

  it('a stream the server refused before acting on it is sent again, once', async () => {
    const handled: string[] = [];
    let refusals = 0;
    const server = await h2Server((stream, headers) => {
      if (headers[':path'] === '/refuse-once' && refusals++ === 0) return stream.close(http2.constants.NGHTTP2_REFUSED_STREAM);
      if (headers[':path'] === '/refuse-always') return stream.close(http2.constants.NGHTTP2_REFUSED_STREAM);
      let body = '';
      stream.setEncoding('utf8');
      stream.on('data', (c: string) => (body += c));
      stream.on('end', () => {
        handled.push(body);
        answer(stream, 'created');
      });
    });
    const client = await clientFor(server.url);
    assert.equal(await client.request({ method: 'POST', path: '/refuse-once', body: { n: 1 } }), 'created');
    assert.deepEqual(handled, ['{"n":1}']);
    await assert.rejects(client.request({ path: '/refuse-always' }), (err) => err instanceof TransientError && /refused/.test(err.message));
  });

  it('an unanswered request times out; the connection, still answering pings, serves the next', async () => {
    const server = await h2Server((stream, headers) => {
      if (headers[':path'] !== '/hang') answer(stream, 'ok');
    });
    const client = await clientFor(server.url);
    await assert.rejects(
      client.request({ path: '/hang', timeoutMs: 200 }),
      (err) => err instanceof TransientError && err.reason === 'Timeout',
    );
    await new Promise((r) => setTimeout(r, 300));
    assert.equal(await client.request({ path: '/ok' }), 'ok');
    assert.equal(server.connections(), 1);
  });

  it('a connection gone silent: a request times out, the unanswered ping ends the watch on it, the next request reconnects', async () => {
    const server = await h2Server((stream, headers) => {
      if (headers[':path'] === '/watch') {
        stream.respond({ ':status': 200 });
        stream.write('{"type":"ADDED"}\n');
      } else answer(stream, 'ok');
    });
    const relay: TcpRelay = await tcpRelay(server.url);
    closers.push(() => relay.close());
    const client = await clientFor(relay.url, 400);
    const watch = await client.stream({ path: '/watch' });
    const watchEnded = new Promise<unknown>((resolve) => {
      watch.body.on('data', () => {});
      watch.body.once('error', resolve);
      watch.body.once('close', () => resolve('closed without an error'));
    });
    relay.freeze();
    const started = Date.now();
    await assert.rejects(client.request({ path: '/ok' }), (err) => err instanceof TransientError && err.reason === 'Timeout');
    const err = await watchEnded;
    assert.ok(err instanceof TransientError && err.reason === 'PingTimeout', String(err));
    assert.ok(Date.now() - started < 3000, `the watch ended ${Date.now() - started} ms after the freeze`);
    assert.equal(await client.request({ path: '/ok' }), 'ok');
    assert.equal(relay.connections, 2);
  });

  it('a server stream limit filled by watches: a request goes over a second connection', async () => {
    const server = http2.createSecureServer({ cert, key, settings: { maxConcurrentStreams: 2 } });
    let connections = 0;
    server.on('secureConnection', () => connections++);
    server.on('stream', (stream, headers) => {
      stream.on('error', () => {});
      if (String(headers[':path']).startsWith('/watch')) stream.respond({ ':status': 200 });
      else answer(stream, 'ok');
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    closers.push(() => server.close());
    const client = await clientFor(`https://127.0.0.1:${(server.address() as AddressInfo).port}`, 2000);
    const watches = [await client.stream({ path: '/watch/1' }), await client.stream({ path: '/watch/2' })];
    assert.equal(await client.request({ path: '/ok' }), 'ok');
    assert.equal(connections, 2);
    for (const w of watches) w.close();
  });

  for (const [cut, how] of [
    ['the connection closes', (stream: ServerHttp2Stream) => stream.session?.socket.destroy()],
    ['the stream is reset with CANCEL', (stream: ServerHttp2Stream) => stream.close(http2.constants.NGHTTP2_CANCEL)],
  ] as const) {
    it(`a list whose answer is cut short (${cut}) fails: never fewer items`, async () => {
      const list = JSON.stringify({ kind: 'ConfigMapList', metadata: { resourceVersion: '7' }, items: [{ metadata: { name: 'a' } }] });
      const server = await h2Server((stream) => {
        stream.respond({ ':status': 200, 'content-type': 'application/json' });
        stream.write(list.slice(0, 40));
        setTimeout(() => how(stream), 20);
      });
      const client = await clientFor(server.url);
      // Cut short, or (node's server ends the stream before its reset) not whole JSON: retryable either way.
      await assert.rejects(client.request({ path: '/api/v1/configmaps' }), (err) => err instanceof TransientError);
    });
  }

  it('an aborted request, or one past its timeout, does not wait for a TLS handshake that hangs', async () => {
    const sockets: Socket[] = [];
    const blackHole = net.createServer((socket) => sockets.push(socket)).listen(0, '127.0.0.1');
    await new Promise((resolve) => blackHole.once('listening', resolve));
    closers.push(() => {
      for (const socket of sockets) socket.destroy();
      blackHole.close();
    });
    const client = await clientFor(`https://127.0.0.1:${(blackHole.address() as AddressInfo).port}`);
    const started = Date.now();
    await assert.rejects(client.request({ path: '/x', signal: AbortSignal.timeout(100) }), (err) => err instanceof TransientError);
    await assert.rejects(
      client.request({ path: '/x', timeoutMs: 200 }),
      (err) => err instanceof TransientError && err.reason === 'Timeout',
    );
    assert.ok(Date.now() - started < 2000, `settled after ${Date.now() - started} ms (the connect timeout is 10 s)`);
  });

  it('an answer with 200 header fields gets through, as over HTTP/1.1', async () => {
    const server = await h2Server((stream) => {
      const many: http2.OutgoingHttpHeaders = { ':status': 200, 'content-type': 'application/json' };
      for (let i = 0; i < 200; i++) many[`x-field-${i}`] = String(i);
      stream.respond(many);
      stream.end('"ok"');
    });
    const client = await clientFor(server.url);
    assert.equal(await client.request({ path: '/many' }), 'ok');
  });

  it('an 8 MiB answer arrives whole', async () => {
    const big = 'x'.repeat(8 << 20);
    const server = await h2Server((stream) => answer(stream, { big }));
    const client = await clientFor(server.url);
    const got = await client.request<{ big: string }>({ path: '/big' });
    assert.equal(got.big.length, big.length);
  });

  it('a process with an idle connection exits on its own, as with a kept-alive socket', async () => {
    const server = await h2Server((stream) => answer(stream, 'ok'));
    const file = kubeconfigFile(server.url);
    const script = `
      import { KubeClient } from './src/kube/client.ts';
      import { loadKubeConfig } from './src/kube/kube-config.ts';
      const client = new KubeClient(await loadKubeConfig({ env: {}, path: ${JSON.stringify(file)} }));
      console.log(await client.request({ path: '/once' }));`;
    const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { cwd: process.cwd() });
    let out = '';
    child.stdout.on('data', (c: Buffer) => (out += c));
    let timer: NodeJS.Timeout | undefined;
    const code = await Promise.race([
      new Promise((resolve) => child.once('exit', resolve)),
      new Promise((resolve) => (timer = setTimeout(() => resolve('still running after 15 s'), 15_000))),
    ]);
    clearTimeout(timer);
    child.kill();
    assert.equal(code, 0);
    assert.equal(out.trim(), 'ok');
  });
});
