import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { FakeClock } from './clock.js';
import { ExponentialBackoffRateLimiter } from './rate-limiter.js';
import { WorkQueue } from './work-queue.js';

/** Resolves with the value, or with 'pending' if the promise has not settled after the current microtasks. */
async function peek<T>(p: Promise<T>): Promise<T | 'pending'> {
  return Promise.race([p, new Promise<'pending'>((r) => setImmediate(() => r('pending')))]);
}

describe('work queue', () => {
  it('collapses duplicate adds into one key, in first-added order', async () => {
    const q = new WorkQueue({ clock: new FakeClock() });
    q.add('a');
    q.add('b');
    q.add('a');
    q.add('a');
    assert.equal(q.len(), 2);
    assert.equal(await q.get(), 'a');
    assert.equal(await q.get(), 'b');
    assert.equal(await peek(q.get()), 'pending');
  });

  it('collapses the adds of one synchronous run into one hand-out, though a worker is waiting', async () => {
    const q = new WorkQueue({ clock: new FakeClock() });
    const waiting = q.get();
    // One watch event of an update: the old object's key, then the new one's — the same key.
    q.add('a');
    q.add('a');
    assert.equal(await waiting, 'a');
    q.done('a');
    assert.equal(await peek(q.get()), 'pending', 'handed out once: not processed a second time after done');
  });

  it('never hands a key to two workers: a key added while processing waits for done, then runs once more', async () => {
    const q = new WorkQueue({ clock: new FakeClock() });
    q.add('a');
    const first = await q.get();
    assert.equal(first, 'a');
    q.add('a');
    q.add('a');
    assert.equal(q.len(), 0, 'not queued while in flight');
    const second = q.get();
    assert.equal(await peek(second), 'pending', 'a second worker does not get the key in flight');
    q.done('a');
    assert.equal(await second, 'a', 'processed once more after done');
    q.done('a');
    assert.equal(q.len(), 0, 'the two adds during processing collapsed into one');
    assert.equal(await peek(q.get()), 'pending');
  });

  it('hands a key to a waiting worker as soon as it is added', async () => {
    const q = new WorkQueue({ clock: new FakeClock() });
    const waiting = q.get();
    q.add('x');
    assert.equal(await waiting, 'x');
    assert.equal(q.inFlight(), 1);
  });

  it('addAfter adds only when the delay has passed, and the earlier of two delays wins', async () => {
    const clock = new FakeClock();
    const q = new WorkQueue({ clock });
    q.addAfter('a', 100);
    q.addAfter('a', 500);
    assert.equal(q.len(), 0);
    clock.advance(99);
    assert.equal(q.len(), 0);
    clock.advance(1);
    assert.equal(q.len(), 1);
    clock.advance(1000);
    assert.equal(q.len(), 1, 'the later duplicate did not add it again');

    q.addAfter('b', 500);
    q.addAfter('b', 50);
    clock.advance(50);
    assert.equal(q.len(), 2, 'rescheduled earlier');
    q.addAfter('c', 0);
    assert.equal(q.len(), 3, 'zero delay adds at once');
  });

  it('backs off per key on failure (5 ms doubling), forget resets it, and keys do not share backoff', async () => {
    const clock = new FakeClock();
    const q = new WorkQueue({ clock, rateLimiter: new ExponentialBackoffRateLimiter(5, 1_000_000) });
    const seen: number[] = [];
    for (let i = 0; i < 5; i++) {
      q.addRateLimited('a');
      let waited = 0;
      while (q.len() === 0 && waited < 10_000) {
        clock.advance(1);
        waited++;
      }
      seen.push(waited);
      q.done((await q.get())!);
    }
    assert.deepEqual(seen, [5, 10, 20, 40, 80]);
    assert.equal(q.numRequeues('a'), 5);
    assert.equal(q.numRequeues('b'), 0);
    q.forget('a');
    assert.equal(q.numRequeues('a'), 0);
    q.addRateLimited('a');
    clock.advance(4);
    assert.equal(q.len(), 0);
    clock.advance(1);
    assert.equal(q.len(), 1, 'back to the base delay after forget');
  });

  it('shutDown hands out nothing more and wakes waiting workers', async () => {
    const q = new WorkQueue({ clock: new FakeClock() });
    const waiting = q.get();
    q.shutDown();
    assert.equal(await waiting, undefined);
    q.add('a');
    assert.equal(await q.get(), undefined);
  });

  it('shutDownWithDrain waits for in-flight keys to be done, and gives up at the deadline', async () => {
    const clock = new FakeClock();
    const q = new WorkQueue({ clock });
    q.add('a');
    q.add('b');
    q.add('c');
    const a = (await q.get())!;
    const b = (await q.get())!;
    const drained = q.shutDownWithDrain(10_000);
    assert.equal(await peek(drained), 'pending');
    assert.equal(await q.get(), undefined, 'queued key c is not handed out after shutdown');
    q.done(a);
    assert.equal(await peek(drained), 'pending', 'b is still in flight');
    q.done(b);
    assert.equal(await drained, true);

    const q2 = new WorkQueue({ clock });
    q2.add('slow');
    await q2.get();
    const late = q2.shutDownWithDrain(1000);
    clock.advance(999);
    assert.equal(await peek(late), 'pending');
    clock.advance(1);
    assert.equal(await late, false, 'deadline passed with work in flight');
  });

  it('reports its depth as it changes', async () => {
    const depths: number[] = [];
    const q = new WorkQueue({ clock: new FakeClock(), onDepthChange: (d) => depths.push(d) });
    q.add('a');
    q.add('b');
    await q.get();
    assert.deepEqual(depths, [1, 2, 1]);
  });
});
