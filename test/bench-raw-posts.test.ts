// Scenario 1's load generator against a real Node HTTP server: what it sends is what the server
// reads, every answer is matched to its request, and an answer it cannot read is an error.
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { test } from 'node:test';
import { RawConnections, serializePost } from '../bench/raw-posts.js';

async function listen(handler: Parameters<typeof createServer>[1]): Promise<{ server: Server; port: number }> {
  const server = createServer(handler);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, port: (server.address() as AddressInfo).port };
}

test('every request arrives whole on kept-alive connections and each answer is timed in its request\'s place', async () => {
  const seen: { path: string; signature: string | undefined; body: string }[] = [];
  const sockets = new Set<unknown>();
  const { server, port } = await listen((req, res) => {
    sockets.add(req.socket);
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      seen.push({ path: req.url!, signature: req.headers['x-hub-signature-256'] as string | undefined, body });
      const n = Number(JSON.parse(body).n);
      // Some answers are slow, so connections finish out of order.
      setTimeout(() => {
        res.statusCode = n % 3 === 0 ? 400 : 202;
        res.end(JSON.stringify({ n, text: 'é'.repeat(n) }));
      }, n % 4);
    });
  });
  try {
    const requests = Array.from({ length: 30 }, (_, n) => serializePost(`127.0.0.1:${port}`, {
      path: '/api/github/webhooks',
      headers: { 'x-hub-signature-256': `sha256=${n}`, 'content-type': 'application/json', 'content-length': '1' },
      body: JSON.stringify({ n, text: 'ü'.repeat(n) }),
    }));
    const connections = await RawConnections.open(port, 4);
    const sendStarted = performance.now();
    const answers = await connections.sendAll(requests).finally(() => connections.close());
    const sendEnded = performance.now();
    assert.deepEqual(answers.map((a) => a.status), Array.from({ length: 30 }, (_, n) => (n % 3 === 0 ? 400 : 202)));
    assert.ok(answers.every((a) => a.ms > 0 && Number.isFinite(a.ms)));
    // When each answer was read: inside the sending, and after its own time had passed.
    assert.ok(answers.every((a) => a.endedAt >= sendStarted + a.ms && a.endedAt <= sendEnded), 'each answer was read within the sending, its time after the start');
    assert.equal(seen.length, 30);
    for (const s of seen) {
      const n = Number(JSON.parse(s.body).n);
      assert.equal(s.path, '/api/github/webhooks');
      assert.equal(s.signature, `sha256=${n}`);
      assert.equal(JSON.parse(s.body).text, 'ü'.repeat(n), 'the body, multi-byte characters included, arrives as sent (Content-Length in bytes)');
    }
    assert.equal(sockets.size, 4, 'one kept-alive connection per concurrent sender, opened once');
  } finally {
    server.closeAllConnections();
    server.close();
  }
});

test('an answer without Content-Length (chunked) is an error, not a time', async () => {
  const { server, port } = await listen((_req, res) => {
    res.write('part');
    res.end('rest');
  });
  try {
    const request = serializePost(`127.0.0.1:${port}`, { path: '/', headers: {}, body: '{}' });
    const connections = await RawConnections.open(port, 1);
    await assert.rejects(connections.sendAll([request]).finally(() => connections.close()), /cannot read .*Content-Length/);
  } finally {
    server.closeAllConnections();
    server.close();
  }
});

test('a connection the receiver closed (an idle timeout, Connection: close) fails the next request at once instead of hanging', { timeout: 10_000 }, async () => {
  const { server, port } = await listen((_req, res) => {
    res.setHeader('connection', 'close');
    res.end('{}');
  });
  try {
    const connections = await RawConnections.open(port, 1);
    const request = serializePost(`127.0.0.1:${port}`, { path: '/', headers: {}, body: '{}' });
    assert.equal((await connections.sendAll([request]))[0]!.status, 200);
    await new Promise((resolve) => setTimeout(resolve, 200));
    await assert.rejects(connections.sendAll([request]).finally(() => connections.close()), /closed the connection/);
  } finally {
    server.closeAllConnections();
    server.close();
  }
});

test('open loop: each request goes out when it is due, not after the answers before it, and one that waits for a connection is timed from when it was due', async () => {
  const arrived: number[] = [];
  const answeredAt: number[] = [];
  const holdMs = 400;
  const { server, port } = await listen((req, res) => {
    const n = arrived.push(performance.now()) - 1;
    req.resume();
    setTimeout(() => {
      answeredAt[n] = performance.now();
      res.end('{}');
    }, holdMs);
  });
  try {
    const request = serializePost(`127.0.0.1:${port}`, { path: '/', headers: {}, body: '{}' });
    const connections = await RawConnections.open(port, 2);
    const started = performance.now();
    // 50 per second: due at 0, 20 and 40 ms; two connections, each answer held 400 ms.
    const answers = await connections.sendAtRate([request, request, request], 50).finally(() => connections.close());
    assert.ok(arrived[1]! >= started + 19, `the second went out when due (${(arrived[1]! - started).toFixed(0)} ms), not at once`);
    assert.ok(arrived[1]! < answeredAt[0]!, 'the second went out before the first was answered');
    assert.ok(arrived[2]! >= answeredAt[0]! - 1, 'the third waited for a free connection');
    // Due at 40 ms, it went out after the first answer (≥ 400 ms) and was held 400 ms more.
    assert.ok(answers[2]!.ms >= 2 * holdMs - 40 - 5, `timed from when it was due: ${answers[2]!.ms.toFixed(0)} ms`);
    assert.deepEqual(answers.map((a) => a.status), [200, 200, 200]);
  } finally {
    server.closeAllConnections();
    server.close();
  }
});
