import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { KubeObject } from '../kube/kube-object.js';
import { carriesDesired } from './resync-spec-match.js';

const desired = {
  apiVersion: 'preview.alien6.io/v1alpha1',
  kind: 'PreviewEnvironment',
  metadata: { name: 'pr-1', labels: { a: '1' }, annotations: { r: 'acme/shop' } },
  spec: { repository: { owner: 'acme' }, pullRequest: { number: 1, labels: ['a', 'b'], draft: false }, ttl: '72h' },
} as KubeObject;

describe('carriesDesired', () => {
  it('is true when the existing object has every desired field, whatever else it has', () => {
    const existing = structuredClone(desired) as any;
    existing.metadata.uid = 'x';
    existing.metadata.labels.other = 'y';
    existing.spec.overrides = { replicas: 1 };
    existing.status = { phase: 'Ready' };
    assert.equal(carriesDesired(existing, desired), true);
  });

  it('is false when a value, a list or a label differs', () => {
    const changed = (edit: (o: any) => void) => {
      const o = structuredClone(desired) as any;
      edit(o);
      return carriesDesired(o, desired);
    };
    assert.equal(
      changed((o) => (o.spec.pullRequest.number = 2)),
      false,
    );
    assert.equal(
      changed((o) => (o.spec.pullRequest.labels = ['a'])),
      false,
    );
    assert.equal(
      changed((o) => (o.spec.pullRequest.labels = ['a', 'b', 'c'])),
      false,
    );
    assert.equal(
      changed((o) => delete o.spec.ttl),
      false,
    );
    assert.equal(
      changed((o) => delete o.metadata.annotations),
      false,
    );
  });

  it('does not count a newer pull request update alone as a difference (every comment moves it)', () => {
    const want = structuredClone(desired) as any;
    want.spec.pullRequest.updatedAt = '2024-01-01T00:00:10Z';
    const have = structuredClone(desired) as any;
    have.spec.pullRequest.updatedAt = '2024-01-01T00:00:01Z';
    assert.equal(carriesDesired(have, want), true);
    assert.equal(carriesDesired(structuredClone(desired) as KubeObject, want), true, 'nor an object written without one');
    want.spec.pullRequest.draft = true;
    assert.equal(carriesDesired(have, want), false, 'anything else still is');
  });
});
