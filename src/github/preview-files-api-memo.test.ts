import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { LruMemo } from './preview-files-api-memo.js';

describe('LruMemo', () => {
  it('loads a key once: later callers get the kept answer', async () => {
    const memo = new LruMemo<string>({ maxEntries: 10 });
    let loads = 0;
    const load = async () => `answer ${++loads}`;
    assert.equal(await memo.get('a', load), 'answer 1');
    assert.equal(await memo.get('a', load), 'answer 1');
    assert.equal(loads, 1);
  });

  it('callers asking while a key loads share that one load', async () => {
    const memo = new LruMemo<number>({ maxEntries: 10 });
    let loads = 0;
    let release!: (n: number) => void;
    const load = () => {
      loads++;
      return new Promise<number>((resolve) => (release = resolve));
    };
    const waiting = Array.from({ length: 20 }, () => memo.get('sha', load));
    release(42);
    assert.deepEqual(
      await Promise.all(waiting),
      Array.from({ length: 20 }, () => 42),
    );
    assert.equal(loads, 1);
  });

  it('a failure is not kept: everyone waiting gets it, the next caller loads again', async () => {
    const memo = new LruMemo<string>({ maxEntries: 10 });
    let loads = 0;
    const failing = async () => {
      loads++;
      throw new Error('GitHub said 502');
    };
    await Promise.all([assert.rejects(memo.get('k', failing), /502/), assert.rejects(memo.get('k', failing), /502/)]);
    assert.equal(loads, 1);
    assert.equal(await memo.get('k', async () => 'recovered'), 'recovered');
    assert.equal(memo.size, 1);
  });

  it('drops the least recently used answer beyond maxEntries', async () => {
    const memo = new LruMemo<string>({ maxEntries: 2 });
    await memo.get('a', async () => 'a1');
    await memo.get('b', async () => 'b1');
    await memo.get('a', async () => 'a2'); // a is now the most recently used
    await memo.get('c', async () => 'c1'); // b goes
    assert.equal(await memo.get('a', async () => 'a3'), 'a1');
    assert.equal(await memo.get('b', async () => 'b2'), 'b2', 'b was dropped and loaded again');
    assert.equal(memo.size, 2);
  });

  it('keeps the total weight under maxWeight, and never keeps an answer heavier than it', async () => {
    const memo = new LruMemo<string>({ maxEntries: 100, maxWeight: 10, weigh: (v) => v.length });
    await memo.get('x', async () => '123456');
    await memo.get('y', async () => '1234');
    assert.equal(memo.totalWeight, 10);
    await memo.get('z', async () => '12'); // over 10: x (the oldest) goes
    assert.equal(memo.totalWeight, 6);
    assert.equal(await memo.get('x', async () => 'again'), 'again');
    assert.equal(await memo.get('huge', async () => '12345678901'), '12345678901');
    let loads = 0;
    await memo.get('huge', async () => String(++loads));
    assert.equal(loads, 1, 'the too-heavy answer was not kept');
    assert.ok(memo.totalWeight <= 10);
  });
});
