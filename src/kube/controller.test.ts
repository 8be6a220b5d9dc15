// The Controller's event wiring without a cluster: sources that emit what a test tells them, and a
// reconciler that records the keys it is given.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { Controller } from './controller.js';
import type { InformerHandler, WatchSource } from './informer.js';
import type { KindRef, KubeObject } from './kube-object.js';
import { silentLogger } from './logger.js';

class Source implements WatchSource {
  private readonly handlers = new Set<InformerHandler>();
  constructor(readonly kind: KindRef) {}
  async waitForSync(): Promise<void> {}
  addHandler(handler: InformerHandler): () => void {
    this.handlers.add(handler);
    return () => this.handlers.delete(handler);
  }
  list(): KubeObject[] {
    return [];
  }
  resourceInfo(): undefined {
    return undefined; // namespaced, as the controller takes an unknown kind
  }
  add(obj: KubeObject): void {
    for (const h of this.handlers) h.onAdd?.(obj);
  }
}

const object = (kind: string, namespace: string, name: string, owner?: string): KubeObject => ({
  apiVersion: 'v1',
  kind,
  metadata: {
    name,
    namespace,
    ...(owner ? { ownerReferences: [{ apiVersion: 'v1', kind: 'Widget', name: owner, uid: 'u', controller: true }] } : {}),
  },
});

describe('a controller', () => {
  it('ignores the owned and watched objects `ignore` names, never its own kind', async () => {
    const [widgets, parts, others] = [
      new Source({ apiVersion: 'v1', kind: 'Widget' }),
      new Source({ apiVersion: 'v1', kind: 'Part' }),
      new Source({ apiVersion: 'v1', kind: 'Other' }),
    ];
    const reconciled: string[] = [];
    const controller = new Controller({
      name: 'widgets',
      for: widgets,
      owns: [parts],
      watches: [{ informer: others, map: (obj) => [`${obj.metadata.namespace}/${obj.metadata.name}`] }],
      ignore: (obj) => obj.metadata.namespace === 'going',
      reconciler: { reconcile: async (key) => void reconciled.push(key) },
      workers: 1,
      resyncPeriodMs: 0,
      logger: silentLogger,
    });
    await controller.start();
    // One worker takes keys in order: what was enqueued before the last one has been reconciled by then.
    parts.add(object('Part', 'going', 'p', 'w1'));
    others.add(object('Other', 'going', 'w2'));
    widgets.add(object('Widget', 'going', 'w3'));
    parts.add(object('Part', 'staying', 'p', 'w4'));
    others.add(object('Other', 'staying', 'w5'));
    for (let i = 0; i < 100 && !reconciled.includes('staying/w5'); i++) await new Promise((r) => setTimeout(r, 10));
    await controller.stop();
    assert.deepEqual(reconciled, ['going/w3', 'staying/w4', 'staying/w5']);
  });
});
