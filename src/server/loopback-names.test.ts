import assert from 'node:assert/strict';
import { request } from 'node:http';
import { after, test } from 'node:test';
import { Router } from 'express';
import { createServer } from './create-server.js';
import { isLoopbackAddress, isLoopbackHost, loopbackNamesOnly } from './loopback-names.js';
import { startServer } from './start-server.js';

const server = await startServer(
  createServer({ routers: [loopbackNamesOnly(), Router().get('/', (_req, res) => void res.send('secret page'))] }),
  { host: '127.0.0.1', port: 0 },
);
after(() => server.close());

/** A GET with the Host header a browser would send for `host`. */
function getAs(host: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request(`${server.url}/`, { headers: { host } }, (res) => {
      let body = '';
      res.setEncoding('utf8').on('data', (c: string) => (body += c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on('error', reject).end();
  });
}

test('a page that rebound its own DNS name to 127.0.0.1 is refused; loopback names are served', async () => {
  const port = new URL(server.url).port;
  const rebound = await getAs(`rebind.attacker.example:${port}`);
  assert.equal(rebound.status, 421);
  assert.doesNotMatch(rebound.body, /secret page/);
  for (const name of ['localhost', '127.0.0.1', '[::1]', 'LOCALHOST']) {
    assert.deepEqual(await getAs(`${name}:${port}`), { status: 200, body: 'secret page' }, name);
  }
});

test('which addresses are loopback, and which Host headers name one', () => {
  assert.deepEqual(['127.0.0.1', '127.1.2.3', '::1', 'localhost', '0.0.0.0', '10.0.0.1', '::'].map(isLoopbackAddress), [
    true,
    true,
    true,
    true,
    false,
    false,
    false,
  ]);
  assert.equal(isLoopbackHost('127.0.0.1.attacker.example'), false);
  assert.equal(isLoopbackHost(undefined), false);
});
