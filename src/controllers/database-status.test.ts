import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { DatabaseResource } from '../../constructs/index.js';
import { databaseStatus } from './database-status.js';

const db: DatabaseResource = {
  apiVersion: 'mycompany.com/v1', kind: 'Database',
  metadata: { name: 'myapp-db', namespace: 'shop', uid: 'u', generation: 2 },
  spec: { engine: 'postgresql', version: '16', storage: '1Gi', replicas: 3 },
};
const now = new Date('2026-01-01T00:00:00Z');
const cond = (s: ReturnType<typeof databaseStatus>, type: string) => s.conditions?.find((c) => c.type === type);

describe('database status', () => {
  it('is Ready with its endpoint and secret once every replica runs the spec', () => {
    const s = databaseStatus(db, { desired: 3, ready: 3, rolledOut: true, image: 'postgres:16' }, { image: 'postgres:16', now });
    assert.equal(s.phase, 'Ready');
    assert.equal(s.endpoint, 'myapp-db.shop.svc.cluster.local');
    assert.equal(s.secretName, 'myapp-db-credentials');
    assert.equal(s.observedGeneration, 2);
    assert.equal(cond(s, 'Ready')?.status, 'True');
    assert.equal(cond(s, 'Degraded')?.status, 'False');
  });

  it('is Provisioning while scaling or upgrading, Pending before the StatefulSet, Failed on a rejected apply', () => {
    assert.equal(databaseStatus(db, { desired: 3, ready: 3, rolledOut: true, image: 'postgres:15' }, { image: 'postgres:16', now }).phase, 'Provisioning');
    assert.equal(databaseStatus(db, { desired: 2, ready: 2, rolledOut: true, image: 'postgres:16' }, { image: 'postgres:16', now }).phase, 'Provisioning');
    assert.equal(databaseStatus(db, undefined, { image: 'postgres:16', now }).phase, 'Pending');
    const failed = databaseStatus(db, undefined, { image: 'postgres:16', now, failure: 'quota exceeded' });
    assert.equal(failed.phase, 'Failed');
    assert.equal(cond(failed, 'Degraded')?.reason, 'ApplyFailed');
  });

  it('keeps transition times of unchanged conditions, so a repeat yields the same status', () => {
    const first = databaseStatus(db, { desired: 3, ready: 3, rolledOut: true, image: 'postgres:16' }, { image: 'postgres:16', now });
    const again = databaseStatus({ ...db, status: first }, { desired: 3, ready: 3, rolledOut: true, image: 'postgres:16' }, { image: 'postgres:16', now: new Date('2026-01-02T00:00:00Z') });
    assert.deepEqual(again, first);
  });
});
