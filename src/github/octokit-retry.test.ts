// The retry plugin against a real HTTP server: which failures are tried again, how often, after
// how long.
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, test } from 'node:test';
import { Octokit } from '@octokit/rest';
import { retry, type RetryOptions } from './octokit-retry.js';

const RetryingOctokit = Octokit.plugin(retry);
let server: Server;
let baseUrl: string;
/** Statuses to answer, in order; 200 once they run out. */
let script: number[] = [];
let arrivals: number[] = [];

before(async () => {
  server = createServer((_req, res) => {
    arrivals.push(performance.now());
    res.statusCode = script.shift() ?? 200;
    res.setHeader('content-type', 'application/json');
    res.end(JSON.stringify(res.statusCode === 200 ? { login: 'octocat' } : { message: `status ${res.statusCode}` }));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
after(() => server.close());

function client(options: RetryOptions, url = baseUrl): Octokit {
  return new RetryingOctokit({ baseUrl: url, retry: options, log: { debug() {}, info() {}, warn() {}, error() {} } });
}

async function run(statuses: number[], options: RetryOptions): Promise<{ status: number; attempts: number; gaps: number[] }> {
  script = [...statuses];
  arrivals = [];
  let status: number;
  try {
    status = (await client(options).rest.users.getAuthenticated()).status;
  } catch (err) {
    status = (err as { status: number }).status;
  }
  return { status, attempts: arrivals.length, gaps: arrivals.slice(1).map((t, i) => t - arrivals[i]!) };
}

test('a 5xx is tried again after (n + 1)² delay units, until it succeeds', async () => {
  const { status, attempts, gaps } = await run([502, 503], { retries: 3, baseDelayMs: 20 });
  assert.deepEqual([status, attempts], [200, 3]);
  assert.ok(gaps[0]! >= 19 && gaps[1]! >= 79, `waited ${gaps.map((g) => g.toFixed(0)).join(' and ')} ms (20 and 80 asked)`);
});

test('after `retries` more attempts the last failure is thrown', async () => {
  assert.deepEqual(await run([500, 500, 500, 500], { retries: 2, baseDelayMs: 1 }).then((r) => [r.status, r.attempts]), [500, 3]);
});

test('client errors and rate limits are not tried again: they would fail the same way, or the throttling plugin waits for them', async () => {
  for (const status of [400, 401, 403, 404, 409, 410, 422, 429, 451]) {
    assert.deepEqual(await run([status], { retries: 3, baseDelayMs: 1 }).then((r) => [r.status, r.attempts]), [status, 1], `status ${status}`);
  }
  assert.deepEqual(await run([408], { retries: 3, baseDelayMs: 1 }).then((r) => [r.status, r.attempts]), [200, 2], 'any other failure is');
});

test('a connection that fails is tried again (Octokit reports it as 500)', async () => {
  const closed = createServer();
  await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(closed.address() as AddressInfo).port}`;
  await new Promise<void>((resolve) => closed.close(() => resolve()));
  const started = performance.now();
  await assert.rejects(client({ retries: 2, baseDelayMs: 30 }, url).rest.users.getAuthenticated(), { status: 500 });
  assert.ok(performance.now() - started >= 30 + 120 - 2, 'two retries, after 30 and 120 ms');
});

test('disabled: the first failure is final', async () => {
  assert.deepEqual(await run([502], { enabled: false }).then((r) => [r.status, r.attempts]), [502, 1]);
});
