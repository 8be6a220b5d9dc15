import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { renderTrafficRoute } from './canary-traffic-route.js';

const owner = { apiVersion: 'ai.alien6.io/v1', kind: 'Algorithm', name: 'reco', uid: 'u', controller: true, blockOwnerDeletion: true };

describe('canary traffic route', () => {
  it('splits by the exact weight over one Service per track, attached to the algorithm Service by default', () => {
    const [stable, canary, route] = renderTrafficRoute({ name: 'reco', namespace: 'ns', canaryWeight: 15, ownerReferences: [owner] });
    assert.equal(stable!.metadata.name, 'reco-stable');
    assert.deepEqual((canary!.spec as { selector: object }).selector, { 'ai.alien6.io/algorithm': 'reco', 'ai.alien6.io/track': 'canary' });
    assert.equal(route!.kind, 'HTTPRoute');
    const spec = route!.spec as { parentRefs: object[]; rules: { backendRefs: { name: string; weight: number }[] }[] };
    assert.deepEqual(spec.parentRefs, [{ group: '', kind: 'Service', name: 'reco', port: 80 }]);
    assert.deepEqual(
      spec.rules[0]!.backendRefs.map((b) => [b.name, b.weight]),
      [
        ['reco-stable', 85],
        ['reco-canary', 15],
      ],
    );
    for (const obj of [stable, canary, route]) assert.deepEqual(obj!.metadata.ownerReferences, [owner]);
  });

  it('uses configured parentRefs and clamps the weight', () => {
    const route = renderTrafficRoute({
      name: 'reco',
      namespace: 'ns',
      canaryWeight: 130,
      ownerReferences: [],
      parentRefs: [{ name: 'gw', namespace: 'infra' }],
    })[2]!;
    const spec = route.spec as { parentRefs: object[]; rules: { backendRefs: { weight: number }[] }[] };
    assert.deepEqual(spec.parentRefs, [{ name: 'gw', namespace: 'infra' }]);
    assert.deepEqual(
      spec.rules[0]!.backendRefs.map((b) => b.weight),
      [0, 100],
    );
  });
});
