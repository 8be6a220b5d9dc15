import { test } from 'node:test';
import assert from 'node:assert/strict';
import { FakeClock } from '../../kube/clock.js';
import { ApprovalRevoker } from './approval-revoker.js';

const target = { owner: 'acme', repo: 'shop', number: 7, label: 'preview-approved' };

/** Lets pending promise callbacks run. */
const tick = () => new Promise((r) => setImmediate(r));

test('revoke returns at once and removes the label in the background', async () => {
  const calls: unknown[][] = [];
  let release!: () => void;
  const gate = new Promise<void>((r) => {
    release = r;
  });
  const revoker = new ApprovalRevoker({
    removeLabel: async (...args) => {
      calls.push(args);
      await gate;
    },
  });
  revoker.revoke(target);
  assert.equal(revoker.pending, 1);
  await tick();
  assert.deepEqual(calls, [['acme', 'shop', 7, 'preview-approved']]);
  revoker.revoke(target);
  await tick();
  assert.equal(calls.length, 1, 'a removal under way is not repeated');
  release();
  await revoker.idle();
  assert.equal(revoker.pending, 0);
  assert.equal(revoker.failures, 0);
});

test('failures are retried with doubling delays until the label is gone', async () => {
  const clock = new FakeClock();
  const attempts: number[] = [];
  const revoker = new ApprovalRevoker({
    clock,
    initialDelayMs: 1000,
    removeLabel: async () => {
      attempts.push(clock.now());
      if (attempts.length < 3) throw new Error('502 from GitHub');
    },
  });
  revoker.revoke(target);
  await tick();
  assert.deepEqual(attempts, [0]);
  clock.advance(999);
  await tick();
  assert.equal(attempts.length, 1);
  clock.advance(1);
  await tick();
  assert.deepEqual(attempts, [0, 1000]);
  clock.advance(2000);
  await tick();
  assert.deepEqual(attempts, [0, 1000, 3000]);
  await revoker.idle();
  assert.equal(revoker.failures, 0);
});

test('after the last attempt it gives up, counts the failure and logs it', async () => {
  const clock = new FakeClock();
  const errors: object[] = [];
  const revoker = new ApprovalRevoker({
    clock,
    attempts: 2,
    initialDelayMs: 10,
    removeLabel: async () => {
      throw new Error('forbidden');
    },
    logger: { debug() {}, info() {}, warn() {}, error: (fields) => errors.push(fields) },
  });
  revoker.revoke(target);
  await tick();
  clock.advance(10);
  await revoker.idle();
  assert.equal(revoker.failures, 1);
  assert.equal(errors.length, 1);
});

test('close stops the retries', async () => {
  const clock = new FakeClock();
  let calls = 0;
  const revoker = new ApprovalRevoker({
    clock,
    removeLabel: async () => {
      calls++;
      throw new Error('down');
    },
  });
  revoker.revoke(target);
  await tick();
  await revoker.close();
  assert.equal(calls, 1);
  assert.equal(revoker.pending, 0);
  revoker.revoke(target);
  assert.equal(revoker.pending, 0, 'nothing is scheduled after close');
});
