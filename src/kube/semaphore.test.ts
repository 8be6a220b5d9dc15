import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Semaphore } from './semaphore.js';
import { KeyedLock } from '../git/keyed-lock.js';

const tick = () => new Promise((r) => setImmediate(r));
// Promise.withResolvers arrives in Node 22.
function gate(): { promise: Promise<void>; resolve: () => void } {
  let resolve!: () => void;
  const promise = new Promise<void>((r) => {
    resolve = r;
  });
  return { promise, resolve };
}

test('a semaphore never lets more than its limit run, and serves waiters in order', async () => {
  const semaphore = new Semaphore(2);
  let running = 0;
  let peak = 0;
  const order: number[] = [];
  const gates = Array.from({ length: 5 }, () => gate());
  const runs = gates.map((gate, i) =>
    semaphore.run(async () => {
      running += 1;
      peak = Math.max(peak, running);
      order.push(i);
      await gate.promise;
      running -= 1;
    }),
  );
  await tick();
  assert.deepEqual(order, [0, 1]);
  assert.equal(semaphore.queued, 3);
  for (const gate of gates) {
    gate.resolve();
    await tick();
  }
  await Promise.all(runs);
  assert.equal(peak, 2);
  assert.deepEqual(order, [0, 1, 2, 3, 4]);
  assert.equal(semaphore.inUse, 0);
});

test('a failing task releases its slot', async () => {
  const semaphore = new Semaphore(1);
  await assert.rejects(
    semaphore.run(async () => {
      throw new Error('boom');
    }),
    /boom/,
  );
  assert.equal(await semaphore.run(async () => 'next'), 'next');
});

test('a keyed lock serialises one key, lets other keys run, and forgets idle keys', async () => {
  const lock = new KeyedLock();
  const events: string[] = [];
  const a1 = gate();
  const first = lock.run('a', async () => {
    events.push('a1 start');
    await a1.promise;
    events.push('a1 end');
  });
  const second = lock.run('a', async () => {
    events.push('a2');
  });
  const other = lock.run('b', async () => {
    events.push('b');
  });
  await other;
  assert.deepEqual(events, ['a1 start', 'b']);
  a1.resolve();
  await Promise.all([first, second]);
  assert.deepEqual(events, ['a1 start', 'b', 'a1 end', 'a2']);
  assert.equal(lock.size, 0);
});
