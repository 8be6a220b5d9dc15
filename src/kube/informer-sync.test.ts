// Many informers waited for with one signal: one abort listener on it (Node warns past ten).
import assert from 'node:assert/strict';
import { getEventListeners } from 'node:events';
import { describe, it } from 'node:test';
import { Controller } from './controller.js';
import type { WatchSource } from './informer.js';
import { waitForAllSynced } from './informer-sync.js';

/** An informer whose first list arrives when the test says so; a signal it is given it listens to, as Informer does. */
function pendingInformer(): { waitForSync: (signal?: AbortSignal) => Promise<void>; sync: () => void } {
  let sync = () => {};
  const synced = new Promise<void>((resolve) => (sync = resolve));
  const waitForSync = (signal?: AbortSignal) =>
    new Promise<void>((resolve, reject) => {
      const onAbort = () => reject(signal!.reason);
      signal?.addEventListener('abort', onAbort, { once: true });
      void synced.then(() => {
        signal?.removeEventListener('abort', onAbort);
        resolve();
      });
    });
  return { waitForSync, sync };
}

describe('waitForAllSynced', () => {
  it('adds one abort listener however many informers, and removes it once all synced', async () => {
    const informers = Array.from({ length: 20 }, pendingInformer);
    const controller = new AbortController();
    const waiting = waitForAllSynced(informers, controller.signal);
    assert.equal(getEventListeners(controller.signal, 'abort').length, 1);
    for (const informer of informers) informer.sync();
    await waiting;
    assert.equal(getEventListeners(controller.signal, 'abort').length, 0);
  });

  it('rejects with the reason when the signal aborts first', async () => {
    const controller = new AbortController();
    const waiting = waitForAllSynced([pendingInformer()], controller.signal);
    controller.abort(new Error('stopping'));
    await assert.rejects(waiting, /stopping/);
    assert.equal(getEventListeners(controller.signal, 'abort').length, 0);
  });

  it('without a signal, waits for every informer', async () => {
    const informers = [pendingInformer(), pendingInformer()];
    let done = false;
    const waiting = waitForAllSynced(informers).then(() => (done = true));
    informers[0]!.sync();
    await new Promise((resolve) => setImmediate(resolve));
    assert.equal(done, false);
    informers[1]!.sync();
    await waiting;
  });

  it('a controller with a dozen watches starts with one abort listener on its signal', async () => {
    const kind = { apiVersion: 'v1', kind: 'ConfigMap' };
    const sources = Array.from({ length: 12 }, () => {
      const informer = pendingInformer();
      const source: WatchSource = {
        kind,
        waitForSync: informer.waitForSync,
        addHandler: () => () => {},
        list: () => [],
        resourceInfo: () => undefined,
      };
      return { source, informer };
    });
    const [first, ...rest] = sources;
    const controller = new Controller({
      name: 'many',
      for: first!.source,
      owns: rest.map((s) => s.source),
      reconciler: { reconcile: async () => ({}) },
    });
    const stop = new AbortController();
    const started = controller.start(stop.signal);
    assert.equal(getEventListeners(stop.signal, 'abort').length, 1);
    for (const { informer } of sources) informer.sync();
    await started;
    await controller.stop();
  });
});
