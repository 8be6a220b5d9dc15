import assert from 'node:assert/strict';
import { test } from 'node:test';
import { progressWait, waitSince } from './progress-pacer.js';

const at = (ms: number) => new Date(ms).toISOString();
const deploying = (sha: string, lastMs: number) => ({ phase: 'Deploying', deployedSha: sha, lastReconciled: at(lastMs) });

test('progress of a deploy already written waits for the rest of the interval since the last status write', () => {
  assert.equal(progressWait(deploying('a', 1000), 'a', 4000, 10_000), 8000, 'written at 1 s or within the second after');
  assert.equal(progressWait(deploying('a', 1000), 'a', 12_000, 10_000), 0);
});

test('status times are whole seconds: a write made late in its second still waits a whole interval', () => {
  // Written at 1.9 s, which the status shows as 1 s: the next progress not before 11.9 s.
  const wait = progressWait(deploying('a', 1000), 'a', 1900, 10_000);
  assert.ok(1900 + wait >= 11_900, `next progress at ${1900 + wait} ms`);
  assert.equal(progressWait(deploying('a', 1000), 'a', 11_500, 10_000), 500);
});

test('a new head SHA, a deploy not written yet, or another phase goes out at once', () => {
  assert.equal(progressWait(deploying('a', 1000), 'b', 2000, 10_000), 0, 'a new SHA');
  assert.equal(progressWait(undefined, 'a', 2000, 10_000), 0, 'no status yet');
  assert.equal(progressWait({ ...deploying('a', 1000), phase: 'Ready' }, 'a', 2000, 10_000), 0, 'not deploying');
  assert.equal(progressWait({ phase: 'Deploying', deployedSha: 'a' }, 'a', 2000, 10_000), 0, 'never written with a time');
});

test("a last write in the future (another leader's clock ahead) waits no longer than the interval", () => {
  assert.equal(progressWait(deploying('a', 60_000), 'a', 1000, 10_000), 10_000);
});

test('an interval of 0 writes every change', () => {
  assert.equal(progressWait(deploying('a', 1000), 'a', 1000, 0), 0);
});

test('waitSince: the rest of the interval since a status time, from the end of its second; nothing without a time', () => {
  assert.equal(waitSince(at(1000), 4000, 10_000), 8000);
  assert.equal(waitSince(undefined, 4000, 10_000), 0);
  assert.equal(waitSince('not a time', 4000, 10_000), 0);
});
