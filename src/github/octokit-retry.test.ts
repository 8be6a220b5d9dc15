// The retry plugin against a real HTTP server: which failures are tried again, how often, after
// how long, and which requests never are (a create whose answer was lost may have been performed).
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, test } from 'node:test';
import { Octokit } from '@octokit/rest';
import { isIdempotent, isOutcomeUnknown, retry, type RetryOptions, type RetryPolicy } from './octokit-retry.js';

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

type Send = (o: Octokit) => Promise<{ status: number }>;
const getAuthenticated: Send = (o) => o.rest.users.getAuthenticated();

async function run(
  statuses: number[],
  options: RetryOptions,
  send = getAuthenticated,
): Promise<{ status: number; attempts: number; gaps: number[] }> {
  script = [...statuses];
  arrivals = [];
  let status: number;
  try {
    status = (await send(client(options))).status;
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
    assert.deepEqual(
      await run([status], { retries: 3, baseDelayMs: 1 }).then((r) => [r.status, r.attempts]),
      [status, 1],
      `status ${status}`,
    );
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

const createComment: Send = (o) => o.rest.issues.createComment({ owner: 'o', repo: 'r', issue_number: 1, body: 'hi' });
const createDeployment: Send = (o) => o.rest.repos.createDeployment({ owner: 'o', repo: 'r', ref: 'main' });
const createStatus: Send = (o) => o.rest.repos.createCommitStatus({ owner: 'o', repo: 'r', sha: 'a'.repeat(40), state: 'pending' });
const updateComment: Send = (o) => o.rest.issues.updateComment({ owner: 'o', repo: 'r', comment_id: 1, body: 'hi' });

test('a create (POST) is never sent again: its 5xx may come after GitHub wrote it', async () => {
  for (const send of [createComment, createDeployment]) {
    assert.deepEqual(await run([502], { retries: 3, baseDelayMs: 1 }, send).then((r) => [r.status, r.attempts]), [502, 1]);
  }
});

test('writes that are idempotent are: a commit status, an edit (PATCH)', async () => {
  for (const send of [createStatus, updateComment]) {
    assert.deepEqual(await run([502], { retries: 3, baseDelayMs: 1 }, send).then((r) => [r.status, r.attempts]), [200, 2]);
  }
});

test('which requests are idempotent, for templates and full URLs alike', () => {
  assert.equal(isIdempotent('GET', '/repos/{owner}/{repo}/issues/{issue_number}/comments'), true);
  assert.equal(isIdempotent('PATCH', '/repos/{owner}/{repo}/issues/comments/{comment_id}'), true);
  assert.equal(isIdempotent('DELETE', '/repos/{owner}/{repo}/issues/{issue_number}/labels/{name}'), true);
  assert.equal(isIdempotent('POST', '/repos/{owner}/{repo}/issues/{issue_number}/comments'), false);
  assert.equal(isIdempotent('POST', '/repos/{owner}/{repo}/deployments'), false);
  assert.equal(isIdempotent('POST', '/repos/{owner}/{repo}/check-runs'), false);
  assert.equal(isIdempotent('POST', 'https://ghe.example.com/api/v3/repos/o/r/deployments/12/statuses'), true);
  assert.equal(isIdempotent('POST', '/repos/{owner}/{repo}/statuses/{sha}'), true);
  assert.equal(isIdempotent('POST', '/app/installations/{installation_id}/access_tokens'), true);
});

test('an unknown outcome is a 5xx or a failed connection, never a refusal; the policy is published for creates', async () => {
  const failure = (status: number) => Object.assign(new Error(`status ${status}`), { status, request: {} });
  const statuses = [500, 502, 504, 400, 403, 404, 422, 429];
  assert.deepEqual(
    statuses.map((s) => isOutcomeUnknown(failure(s))),
    [true, true, true, false, false, false, false, false],
  );
  assert.equal(isOutcomeUnknown(new Error('not a request')), false);
  const policy = (client({ retries: 2, baseDelayMs: 10 }) as unknown as { retryPolicy: RetryPolicy }).retryPolicy;
  assert.deepEqual([policy.retries, policy.delayMs(0), policy.delayMs(1)], [2, 10, 40]);
  assert.equal((client({ enabled: false }) as unknown as { retryPolicy: RetryPolicy }).retryPolicy.retries, 0);
});
