import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { FakeClock } from './clock.js';
import { ExponentialBackoffRateLimiter, MaxOfRateLimiter, TokenBucketRateLimiter, defaultControllerRateLimiter } from './rate-limiter.js';

describe('rate limiters', () => {
  it('exponential backoff doubles from 5 ms and is capped at 1000 s', () => {
    const r = new ExponentialBackoffRateLimiter();
    const delays = Array.from({ length: 30 }, () => r.when('k'));
    assert.deepEqual(delays.slice(0, 6), [5, 10, 20, 40, 80, 160]);
    // 5 ms × 2^17 = 655.36 s; × 2^18 would be 1310.72 s, over the cap.
    assert.equal(delays[17], 655_360);
    assert.equal(delays[18], 1_000_000);
    assert.ok(delays.slice(18).every((d) => d === 1_000_000));
    assert.equal(r.when('other'), 5, 'per key');
    for (let i = 0; i < 2000; i++) r.when('k');
    assert.equal(r.when('k'), 1_000_000, 'no overflow after many failures');
  });

  it('token bucket: a burst of 100 immediately, then 10 per second', () => {
    const clock = new FakeClock(1_000_000);
    const r = new TokenBucketRateLimiter(10, 100, clock);
    for (let i = 0; i < 100; i++) assert.equal(r.when(), 0, `token ${i} is free`);
    assert.equal(r.when(), 100, '101st waits one refill interval');
    assert.equal(r.when(), 200, 'reservations queue up');
    clock.advance(1000);
    // 10 tokens refilled, 2 were already reserved: 8 free now.
    for (let i = 0; i < 8; i++) assert.equal(r.when(), 0);
    assert.equal(r.when(), 100);
    clock.advance(3_600_000);
    for (let i = 0; i < 100; i++) assert.equal(r.when(), 0, 'refills only up to the burst');
    assert.equal(r.when(), 100);
  });

  it('the default limiter takes the larger of per-key backoff and the overall bucket', () => {
    const clock = new FakeClock();
    const r = defaultControllerRateLimiter(clock);
    assert.equal(r.when('a'), 5);
    assert.equal(r.when('a'), 10);
    for (let i = 0; i < 98; i++) r.when(`k${i}`);
    assert.equal(r.when('b'), 100, "bucket empty: 100 ms beats b's 5 ms");
    assert.equal(r.numRequeues('a'), 2);
    r.forget('a');
    assert.equal(r.numRequeues('a'), 0);
    assert.ok(r instanceof MaxOfRateLimiter);
  });
});
