import assert from 'node:assert/strict';
import { test } from 'node:test';
import { createServer } from './create-server.js';
import { Readiness } from './health.js';
import { startServer } from './start-server.js';

test('/readyz names the failing check, turns ready when it passes, and unready when draining', async () => {
  let synced = false;
  const readiness = new Readiness()
    .add('informers-synced', () => synced)
    .add('broken', () => {
      throw new Error('boom');
    });
  readiness.add('broken', () => true);
  const server = await startServer(createServer({ routers: [readiness.router()] }));
  try {
    let res = await fetch(`${server.url}/readyz`);
    assert.equal(res.status, 503);
    assert.equal(await res.text(), '[-]informers-synced failed\nnot ready\n');
    synced = true;
    res = await fetch(`${server.url}/readyz?verbose`);
    assert.equal(res.status, 200);
    assert.equal(await res.text(), '[+]not-shutting-down ok\n[+]informers-synced ok\n[+]broken ok\nok\n');
    readiness.drain();
    res = await fetch(`${server.url}/readyz`);
    assert.equal(res.status, 503);
    assert.match(await res.text(), /\[-\]not-shutting-down failed/);
    assert.equal((await fetch(`${server.url}/healthz`)).status, 200, 'a draining replica is still alive');
  } finally {
    await server.close();
  }
});

test('a check that throws counts as not ready', async () => {
  const readiness = new Readiness().add('throws', () => Promise.reject(new Error('no')));
  assert.deepEqual(await readiness.evaluate(), {
    ready: false,
    checks: [
      { name: 'not-shutting-down', ok: true },
      { name: 'throws', ok: false },
    ],
  });
});
