import { test } from 'node:test';
import assert from 'node:assert/strict';
import { FakeClock } from '../kube/clock.js';
import { DeliveryDedupe } from './delivery-dedupe.js';

test('an id is accepted once within the window, again after it', () => {
  const clock = new FakeClock();
  const dedupe = new DeliveryDedupe({ windowMs: 60_000, clock });
  assert.equal(dedupe.claim('a'), true);
  assert.equal(dedupe.claim('a'), false);
  clock.advance(59_999);
  assert.equal(dedupe.claim('a'), false);
  clock.advance(1);
  assert.equal(dedupe.claim('a'), true, 'forgotten after the window');
});

test('memory is bounded: beyond maxEntries the oldest ids are forgotten first', () => {
  const dedupe = new DeliveryDedupe({ maxEntries: 3, clock: new FakeClock() });
  for (const id of ['a', 'b', 'c', 'd']) assert.equal(dedupe.claim(id), true);
  assert.equal(dedupe.size, 3);
  assert.equal(dedupe.claim('d'), false);
  assert.equal(dedupe.claim('b'), false);
  assert.equal(dedupe.claim('a'), true, 'the oldest was evicted');
});

test('expired ids are dropped as time passes, so the map shrinks', () => {
  const clock = new FakeClock();
  const dedupe = new DeliveryDedupe({ windowMs: 1000, clock });
  for (let i = 0; i < 100; i++) dedupe.claim(`id-${i}`);
  clock.advance(1000);
  dedupe.claim('new');
  assert.equal(dedupe.size, 1);
});

test('a released id (its handling failed) is accepted again', () => {
  const dedupe = new DeliveryDedupe({ clock: new FakeClock() });
  assert.equal(dedupe.claim('a'), true);
  dedupe.release('a');
  assert.equal(dedupe.claim('a'), true);
});
