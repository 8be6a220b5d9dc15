import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { SlotLedger, type SlotEnvironment } from './preview-environment-slots.js';

const env = (pullRequest: number, phase?: string, deleting = false): SlotEnvironment => ({
  name: `pr-${pullRequest}`,
  pullRequest,
  phase,
  deleting,
});

describe('per-repository slots', () => {
  it('admits up to the cap in PR-number order and tells the others their place', () => {
    const ledger = new SlotLedger();
    const all = [env(5), env(3), env(9)];
    // The lowest number gets the free slot even when a higher one asks first.
    assert.deepEqual(ledger.decide('pr-5', all, 1), { admitted: false, position: 1, cap: 1 });
    assert.deepEqual(ledger.decide('pr-9', all, 1), { admitted: false, position: 2, cap: 1 });
    assert.deepEqual(ledger.decide('pr-3', all, 1), { admitted: true });
    // pr-3's admission is remembered before its status says so: the next decision sees it.
    assert.deepEqual(ledger.decide('pr-5', all, 1), { admitted: false, position: 1, cap: 1 });
    assert.deepEqual(ledger.decide('pr-9', all, 1), { admitted: false, position: 2, cap: 1 });
  });

  it('a slot stays held while the holder is being deleted, and frees when it is released', () => {
    const ledger = new SlotLedger();
    assert.deepEqual(ledger.decide('pr-2', [env(1, 'Ready', true), env(2)], 1), { admitted: false, position: 1, cap: 1 });
    ledger.release('pr-1');
    assert.deepEqual(ledger.decide('pr-2', [env(2)], 1), { admitted: true });
  });

  it('an environment that holds a slot keeps it when the cap is lowered; no cap admits everyone', () => {
    const ledger = new SlotLedger();
    const all = [env(1, 'Ready'), env(2, 'Deploying'), env(3)];
    assert.deepEqual(ledger.decide('pr-2', all, 1), { admitted: true });
    assert.deepEqual(ledger.decide('pr-3', all, 1), { admitted: false, position: 1, cap: 1 });
    assert.deepEqual(ledger.decide('pr-3', all, null), { admitted: true });
  });

  it('an Expired environment holds its slot while its namespace stands, then leaves it to those Queued', () => {
    const ledger = new SlotLedger();
    for (const namespace of ['standing', 'going'] as const) {
      const expiring = { ...env(1, 'Expired'), namespace };
      assert.deepEqual(ledger.decide('pr-2', [expiring, env(2, 'Queued')], 1), { admitted: false, position: 1, cap: 1 });
    }
    // Gone: it waits for no slot (a push would ask again for itself), so its lower number takes none.
    assert.deepEqual(ledger.decide('pr-2', [env(1, 'Expired'), env(2, 'Queued')], 1), { admitted: true });
    assert.deepEqual(ledger.decide('pr-1', [env(1, 'Expired'), env(2, 'Queued')], 1), { admitted: false, position: 1, cap: 1 });
  });

  it('asking again after a push, an Expired environment whose namespace is still going waits in PR-number order', () => {
    const ledger = new SlotLedger();
    const pushed = { ...env(5, 'Expired'), namespace: 'going' as const };
    // Behind #2, which gets the slot once the namespace is gone; until then the namespace holds it for the others.
    assert.deepEqual(ledger.decide('pr-5', [env(2, 'Queued'), pushed], 1), { admitted: false, position: 1, cap: 1 });
    assert.deepEqual(ledger.decide('pr-2', [env(2, 'Queued'), pushed], 1), { admitted: false, position: 1, cap: 1 });
    const lower = { ...env(1, 'Expired'), namespace: 'going' as const };
    assert.deepEqual(ledger.decide('pr-1', [lower, env(2, 'Queued')], 1), { admitted: true });
  });
});
