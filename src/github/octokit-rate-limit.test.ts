// What a refusal asks of the credential: retry-after on a 403 or 429 whatever its message, the
// primary limit's reset, GitHub's minute for a secondary limit without retry-after.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { isRateLimited, requestedWait, retryAfterSeconds } from './octokit-rate-limit.js';

const now = Date.parse('2026-12-01T12:00:00Z');
const refusal = (status: number, message: string, headers: Record<string, string> = {}) => ({ status, message, response: { headers } });

test('retry-after is honoured on a 429 and on a 403 alike, whatever the message says', () => {
  assert.deepEqual(requestedWait(refusal(429, 'Too Many Requests', { 'retry-after': '2' }), now), {
    seconds: 2,
    limit: 'secondary',
    reason: '429 with retry-after: 2',
  });
  assert.equal(requestedWait(refusal(403, 'You have triggered an abuse detection mechanism.', { 'retry-after': '3' }), now)?.seconds, 3);
  assert.equal(requestedWait(refusal(403, 'Forbidden', { 'retry-after': '4' }), now)?.seconds, 4);
  assert.equal(requestedWait(refusal(403, 'You have exceeded a secondary rate limit.', { 'retry-after': '5' }), now)?.seconds, 5);
});

test('without retry-after: the primary limit until one past its reset, a minute for a secondary limit or a 429', () => {
  const reset = String(now / 1000 + 30);
  const exhausted = { 'x-ratelimit-remaining': '0', 'x-ratelimit-reset': reset };
  assert.deepEqual(requestedWait(refusal(403, 'API rate limit exceeded', exhausted), now), {
    seconds: 31,
    limit: 'primary',
    reason: 'primary rate limit exhausted (x-ratelimit-remaining: 0)',
  });
  assert.deepEqual(requestedWait(refusal(403, 'API rate limit exceeded', { ...exhausted, 'retry-after': '7' }), now), {
    seconds: 7,
    limit: 'primary',
    reason: '403 with retry-after: 7',
  });
  assert.equal(requestedWait(refusal(403, 'You have exceeded a secondary rate limit.'), now)?.seconds, 60);
  assert.equal(requestedWait(refusal(403, 'You have triggered an abuse detection mechanism.'), now)?.seconds, 60);
  assert.equal(requestedWait(refusal(429, 'Too Many Requests'), now)?.seconds, 60);
});

test('other refusals ask for nothing', () => {
  assert.equal(requestedWait(refusal(403, 'Resource not accessible by integration'), now), undefined);
  assert.equal(requestedWait(refusal(404, 'Not Found', { 'retry-after': '2' }), now), undefined);
  assert.equal(requestedWait(refusal(503, 'Service Unavailable', { 'retry-after': '2' }), now), undefined);
  assert.equal(isRateLimited(refusal(403, 'Resource not accessible by integration')), false);
  assert.equal(isRateLimited(refusal(403, 'You have triggered an abuse detection mechanism.')), true);
  assert.equal(isRateLimited(refusal(429, 'Too Many Requests')), true);
  assert.equal(isRateLimited(null), false);
});

test('retry-after as delay-seconds or as an HTTP date', () => {
  assert.equal(retryAfterSeconds('0', now), 0);
  assert.equal(retryAfterSeconds(' 12 ', now), 12);
  assert.equal(retryAfterSeconds(new Date(now + 9_500).toUTCString(), now), 9);
  assert.equal(retryAfterSeconds(new Date(now - 5_000).toUTCString(), now), 0);
  assert.equal(retryAfterSeconds('soon', now), undefined);
  assert.equal(retryAfterSeconds(undefined, now), undefined);
});
