// The throttling plugin against a real HTTP server: what is held, for how long, and what is
// sent again after a rate limit.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, beforeEach, test } from 'node:test';
import { Octokit } from '@octokit/rest';
import { RateLimitObserver, rateLimitGuard } from './octokit-rate-limit.js';
import { throttle, type RateLimitHandler, type ThrottleOptions } from './octokit-throttle.js';

const ThrottledOctokit = Octokit.plugin(throttle);
let server: Server;
let baseUrl: string;
interface Arrival {
  method: string;
  path: string;
  at: number;
}
let arrivals: Arrival[] = [];
let inFlight = 0;
let mostInFlight = 0;
/** Answers for the next requests, in order; then 200 (held back while `holding`). */
let script: ((res: ServerResponse) => void)[] = [];
let holding = false;
let held: (() => void)[] = [];
/** When each request left the client (its fetch was called): where the throttle's spacing is kept. */
let sent: { method: string; path: string; at: number }[] = [];

before(async () => {
  server = createServer((req: IncomingMessage, res: ServerResponse) => {
    arrivals.push({ method: req.method!, path: req.url!.split('?')[0]!, at: performance.now() });
    inFlight += 1;
    mostInFlight = Math.max(mostInFlight, inFlight);
    req.resume();
    const answer = script.shift();
    const respond = () => {
      inFlight -= 1;
      res.setHeader('content-type', 'application/json');
      if (answer) return answer(res);
      res.end(JSON.stringify({ ok: true }));
    };
    if (holding && !answer) held.push(respond);
    else respond();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
after(() => server.close());
beforeEach(() => {
  arrivals = [];
  inFlight = 0;
  mostInFlight = 0;
  script = [];
  holding = false;
  held = [];
  sent = [];
});

const recordingFetch: typeof fetch = (input, init) => {
  const url = new URL(typeof input === 'string' ? input : input instanceof URL ? input.href : input.url);
  sent.push({ method: init?.method ?? 'GET', path: url.pathname, at: performance.now() });
  return fetch(input, init);
};

const never: RateLimitHandler = () => false;

/** A client with an id of its own (clients of one id share their limits), fast intervals unless given. */
function client(options: Partial<ThrottleOptions> = {}): Octokit {
  const throttleOptions: ThrottleOptions = {
    id: randomBytes(4).toString('hex'),
    onSecondaryRateLimit: never,
    onRateLimit: never,
    writeIntervalMs: 200,
    notificationIntervalMs: 1000,
    searchIntervalMs: 400,
    retryAfterUnitMs: 50,
    ...options,
  };
  const log = { debug() {}, info() {}, warn() {}, error() {} };
  return new ThrottledOctokit({ baseUrl, throttle: throttleOptions, request: { fetch: recordingFetch }, log });
}

const gaps = (of: { at: number }[]) => of.slice(1).map((a, i) => a.at - of[i]!.at);
/** Spacing is kept where requests start; what happens between the turn and the send may take a few ms. */
const atLeast = (ms: number) => (gap: number) => gap >= ms * 0.9;
const shown = (of: number[]) => of.map((g) => g.toFixed(0)).join(', ');
const until = async (check: () => boolean) => {
  const deadline = Date.now() + 10_000;
  while (!check()) {
    if (Date.now() > deadline) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 5));
  }
};
const status = (o: Octokit, n: number) =>
  o.rest.repos.createCommitStatus({ owner: 'o', repo: 'r', sha: `${n}`.padStart(40, '0'), state: 'pending' });
const comment = (o: Octokit) => o.rest.issues.createComment({ owner: 'o', repo: 'r', issue_number: 1, body: 'hi' });
const read = (o: Octokit) => o.rest.pulls.get({ owner: 'o', repo: 'r', pull_number: 1 });

test('reads are not held back: they go at once, at most 10 in flight per credential', async () => {
  holding = true;
  const o = client();
  const reads = Promise.all(Array.from({ length: 11 }, () => read(o)));
  await until(() => arrivals.length === 10);
  await new Promise((r) => setTimeout(r, 100));
  assert.equal(arrivals.length, 10, 'the eleventh waits for a slot');
  held.shift()!();
  await until(() => arrivals.length === 11);
  holding = false;
  for (const respond of held.splice(0)) respond();
  await reads;
  assert.equal(mostInFlight, 10);
});

test('writes start at least 1 s apart by default, and reads meanwhile are not held behind them', async () => {
  const o = client({ writeIntervalMs: undefined });
  const writes = Promise.all([status(o, 1), status(o, 2)]);
  await new Promise((r) => setTimeout(r, 50));
  await read(o);
  await writes;
  const posts = sent.filter((a) => a.method === 'POST');
  assert.ok(gaps(posts).every(atLeast(1000)), `the second write started ${shown(gaps(posts))} ms after the first`);
  const get = sent.find((a) => a.method === 'GET')!;
  assert.ok(get.at < posts[1]!.at, 'the read went while the second write waited');
});

test('writes that notify people are spaced further (3 s by default; 1 s here), other writes keep their own spacing', async () => {
  const o = client();
  await Promise.all([comment(o), comment(o), comment(o)]);
  assert.ok(gaps(sent).every(atLeast(1000)), `comments ${shown(gaps(sent))} ms apart`);
  sent = [];
  await Promise.all([status(o, 1), status(o, 2), status(o, 3)]);
  assert.ok(gaps(sent).every(atLeast(200)), `statuses ${shown(gaps(sent))} ms apart`);
  assert.ok(sent[2]!.at - sent[0]!.at < 1000, `statuses are not spaced as notifying writes: ${shown(gaps(sent))} ms apart`);
});

test('a write whose turn came late (the process was busy) pushes the next one back: no two start closer than the interval', async () => {
  const o = client();
  const writes = Promise.all([status(o, 1), status(o, 2), status(o, 3)]);
  await until(() => sent.length === 1);
  // Busy from 150 ms until 300 ms after the first write: the second's timer (due at 200) fires late.
  await new Promise((r) => setTimeout(r, 150 - (performance.now() - sent[0]!.at)));
  const busyUntil = sent[0]!.at + 300;
  while (performance.now() < busyUntil);
  await writes;
  assert.ok(sent[1]!.at - sent[0]!.at >= 290, "the second write's turn came late");
  assert.ok(gaps(sent).every(atLeast(200)), `writes ${shown(gaps(sent))} ms apart`);
});

test('searches start at least 2 s apart by default (400 ms here)', async () => {
  const o = client();
  await Promise.all([o.rest.search.issuesAndPullRequests({ q: 'a' }), o.rest.search.issuesAndPullRequests({ q: 'b' })]);
  assert.ok(gaps(sent).every(atLeast(400)), `${shown(gaps(sent))} ms apart`);
});

test('clients of one credential (one id) share its spacing; another credential does not wait for it', async () => {
  const id = randomBytes(4).toString('hex');
  const [a, b, other] = [client({ id, writeIntervalMs: 1000 }), client({ id, writeIntervalMs: 1000 }), client({ writeIntervalMs: 1000 })];
  await Promise.all([status(a, 1), status(b, 2), status(other, 3)]);
  const [first, second, third] = sent.map((x) => x.at).sort((x, y) => x - y);
  assert.ok(second! - first! < 500, "the other credential's write did not wait");
  assert.ok(atLeast(1000)(third! - first!), 'the second write of the shared credential waited its turn');
});

test("an App's token requests are neither spaced as writes nor held behind them", async () => {
  const o = client({ writeIntervalMs: 1000 });
  await Promise.all([
    status(o, 1),
    status(o, 2),
    o.request('POST /app/installations/{installation_id}/access_tokens', { installation_id: 1 }),
    o.request('POST /app/installations/{installation_id}/access_tokens', { installation_id: 2 }),
  ]);
  const tokens = sent.filter((a) => a.path.endsWith('/access_tokens'));
  const writes = sent.filter((a) => a.path.includes('/statuses/'));
  assert.ok(
    tokens.every((t) => t.at < writes[1]!.at),
    "both token requests went before the second write's turn",
  );
});

const secondaryLimit = (retryAfter?: number) => (res: ServerResponse) => {
  res.statusCode = 403;
  if (retryAfter !== undefined) res.setHeader('retry-after', String(retryAfter));
  res.end(JSON.stringify({ message: 'You have exceeded a secondary rate limit. Please wait a few minutes before you try again.' }));
};

test('after a secondary rate limit the request is sent again once its retry-after has passed, if the handler agrees', async () => {
  const calls: [number, string, string, number][] = [];
  const o = client({
    onSecondaryRateLimit: (seconds, request, _octokit, retryCount) => {
      calls.push([seconds, request.method, request.url, retryCount]);
      return retryCount < 2;
    },
  });
  script = [secondaryLimit(2), secondaryLimit(2)];
  assert.equal((await status(o, 1)).status, 200);
  assert.deepEqual(calls, [
    [2, 'POST', '/repos/{owner}/{repo}/statuses/{sha}', 0],
    [2, 'POST', '/repos/{owner}/{repo}/statuses/{sha}', 1],
  ]);
  assert.ok(gaps(sent).every(atLeast(100)), `sent again after ${shown(gaps(sent))} ms (2 × 50 asked)`);

  script = [secondaryLimit(), secondaryLimit(), secondaryLimit()];
  arrivals = [];
  calls.length = 0;
  await assert.rejects(status(o, 2), { status: 403 });
  assert.equal(arrivals.length, 3, 'the handler declined the third');
  assert.equal(calls[0]![0], 60, "without retry-after: GitHub's advice, a minute");
});

test('a plain 429, or a 403 that does not say "secondary", with retry-after is sent again once it has passed', async () => {
  const calls: [number, number][] = [];
  const o = client({ onSecondaryRateLimit: (seconds, _request, _octokit, retryCount) => (calls.push([seconds, retryCount]), true) });
  const refusal = (status: number, message: string) => (res: ServerResponse) => {
    res.statusCode = status;
    res.setHeader('retry-after', '2');
    res.end(JSON.stringify({ message }));
  };
  script = [refusal(429, 'Too Many Requests'), refusal(403, 'You have triggered an abuse detection mechanism.')];
  assert.equal((await status(o, 1)).status, 200);
  assert.deepEqual(calls, [
    [2, 0],
    [2, 1],
  ]);
  assert.equal(arrivals.length, 3);
  assert.ok(gaps(sent).every(atLeast(100)), `sent again after ${shown(gaps(sent))} ms (2 × 50 asked)`);
});

test('while GitHub has paused the credential no write takes its turn: writes queued meanwhile keep their spacing after the pause', async () => {
  const GuardedOctokit = Octokit.plugin(rateLimitGuard, throttle);
  const o = new GuardedOctokit({
    baseUrl,
    request: { fetch: recordingFetch },
    log: { debug() {}, info() {}, warn() {}, error() {} },
    rateLimitGuard: { observer: new RateLimitObserver(), client: 'paused', maxWaitSeconds: 60 },
    throttle: {
      id: randomBytes(4).toString('hex'),
      onSecondaryRateLimit: () => true,
      onRateLimit: never,
      writeIntervalMs: 200,
      retryAfterUnitMs: 1,
    },
  });
  script = [secondaryLimit(1)];
  const refused = status(o, 1);
  await until(() => arrivals.length === 1);
  await new Promise((r) => setTimeout(r, 50)); // the refusal is read: GitHub's pause of 1 s has begun
  await Promise.all([refused, status(o, 2), status(o, 3), status(o, 4)]);
  const afterPause = sent.slice(1);
  assert.equal(afterPause.length, 4, 'the refused write again, and the three queued');
  assert.ok(
    afterPause.every((a) => a.at - sent[0]!.at >= 950),
    'nothing was sent during the pause',
  );
  assert.ok(gaps(afterPause).every(atLeast(200)), `after the pause: ${shown(gaps(afterPause))} ms apart`);
});

test('after the primary limit is used up the handler is told the seconds until one past the reset', async () => {
  const told: number[] = [];
  const o = client({
    onRateLimit: (seconds) => {
      told.push(seconds);
      return true;
    },
    retryAfterUnitMs: 1,
  });
  const reset = Math.floor(Date.now() / 1000) + 2;
  script = [
    (res) => {
      res.statusCode = 403;
      res.setHeader('x-ratelimit-remaining', '0');
      res.setHeader('x-ratelimit-reset', String(reset));
      res.end(JSON.stringify({ message: 'API rate limit exceeded for user ID 1.' }));
    },
  ];
  assert.equal((await read(o)).status, 200);
  assert.equal(arrivals.length, 2);
  assert.ok(told[0]! >= 2 && told[0]! <= 4, `told ${told[0]} s`);
});

test('other refusals are thrown at once, the handlers not asked', async () => {
  let asked = 0;
  const o = client({ onSecondaryRateLimit: () => (asked++, true), onRateLimit: () => (asked++, true) });
  script = [
    (res) => {
      res.statusCode = 403;
      res.end(JSON.stringify({ message: 'Resource not accessible by integration' }));
    },
  ];
  await assert.rejects(read(o), { status: 403 });
  script = [
    (res) => {
      res.statusCode = 404;
      res.end(JSON.stringify({ message: 'Not Found' }));
    },
  ];
  await assert.rejects(read(o), { status: 404 });
  assert.equal(asked, 0);
  assert.equal(arrivals.length, 2);
});

test('a rate-limit handler that throws means no retry; the refusal is thrown', async () => {
  const o = client({
    onSecondaryRateLimit: () => {
      throw new Error('broken handler');
    },
  });
  script = [secondaryLimit(1)];
  await assert.rejects(read(o), { status: 403 });
  assert.equal(arrivals.length, 1);
});

test('disabled, nothing is spaced; enabled, both handlers are required', async () => {
  const o = new ThrottledOctokit({ baseUrl, throttle: { enabled: false }, request: { fetch: recordingFetch } });
  await Promise.all([status(o, 1), status(o, 2)]);
  assert.ok(gaps(sent)[0]! < 500, 'the second write did not wait a turn');
  assert.throws(() => new ThrottledOctokit({ baseUrl, throttle: { onRateLimit: never } }), /handlers are required/);
});
