import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { DatabaseResource } from '../../constructs/index.js';
import { databaseStatus } from './database-status.js';

const db: DatabaseResource = {
  apiVersion: 'mycompany.com/v1',
  kind: 'Database',
  metadata: { name: 'myapp-db', namespace: 'shop', uid: 'u', generation: 2 },
  spec: { engine: 'postgresql', version: '16', storage: '1Gi', replicas: 3 },
};
const now = new Date('2026-01-01T00:00:00Z');
const cond = (s: ReturnType<typeof databaseStatus>, type: string) => s.conditions?.find((c) => c.type === type);
/** A primary and `replicas` replicas, all ready and rolled out. */
const servers = (replicas: number, image = 'postgres:16') => ({
  primary: { desired: 1, ready: 1, rolledOut: true, image },
  replicas: { desired: replicas - 1, ready: replicas - 1, rolledOut: true, image },
});

describe('database status', () => {
  it('is Ready with its endpoint and secret once every replica runs the spec', () => {
    const s = databaseStatus(db, servers(3), { image: 'postgres:16', now });
    assert.equal(s.phase, 'Ready');
    assert.equal(s.endpoint, 'myapp-db.shop.svc.cluster.local');
    assert.equal(s.secretName, 'myapp-db-credentials');
    assert.equal(s.observedGeneration, 2);
    assert.equal(cond(s, 'Ready')?.status, 'True');
    assert.equal(cond(s, 'Degraded')?.status, 'False');
  });

  it('is Provisioning while scaling or upgrading, Pending before the StatefulSet, Failed on a rejected apply', () => {
    assert.equal(databaseStatus(db, servers(3, 'postgres:15'), { image: 'postgres:16', now }).phase, 'Provisioning');
    assert.equal(databaseStatus(db, servers(2), { image: 'postgres:16', now }).phase, 'Provisioning');
    assert.equal(
      databaseStatus(db, { primary: servers(3).primary }, { image: 'postgres:16', now }).phase,
      'Provisioning',
      'no replicas yet',
    );
    assert.equal(databaseStatus(db, {}, { image: 'postgres:16', now }).phase, 'Pending');
    const failed = databaseStatus(db, {}, { image: 'postgres:16', now, failure: 'quota exceeded' });
    assert.equal(failed.phase, 'Failed');
    assert.equal(cond(failed, 'Degraded')?.reason, 'ApplyFailed');
  });

  it('keeps transition times of unchanged conditions, so a repeat yields the same status', () => {
    const first = databaseStatus(db, servers(3), { image: 'postgres:16', now });
    const again = databaseStatus({ ...db, status: first }, servers(3), { image: 'postgres:16', now: new Date('2026-01-02T00:00:00Z') });
    assert.deepEqual(again, first);
  });

  it('names the primary and counts the streaming replicas, from readiness', () => {
    const s = databaseStatus(db, servers(3), { image: 'postgres:16', now });
    assert.deepEqual([s.primary, s.streamingReplicas, s.readyReplicas], ['myapp-db-0', 2, 3]);
    assert.equal(cond(s, 'Ready')?.message, 'primary ready, 2 of 2 replicas streaming');
    const lagging = servers(3);
    lagging.replicas = { ...lagging.replicas, ready: 1, rolledOut: false };
    const one = databaseStatus(db, lagging, { image: 'postgres:16', now });
    assert.deepEqual(
      [one.phase, one.streamingReplicas, cond(one, 'Ready')?.message],
      ['Provisioning', 1, 'primary ready, 1 of 2 replicas streaming'],
    );
    const single = databaseStatus(
      { ...db, spec: { ...db.spec, replicas: 1 } },
      { primary: servers(1).primary },
      { image: 'postgres:16', now },
    );
    assert.deepEqual(
      [single.phase, single.primary, single.streamingReplicas, cond(single, 'Ready')?.message],
      ['Ready', 'myapp-db-0', 0, '1 of 1 replicas ready'],
    );
  });

  it('kstatus: Reconciling while provisioning, Ready alone once ready, Stalled on a refused apply; each at the generation', () => {
    const kstatus = (s: ReturnType<typeof databaseStatus>) =>
      ['Ready', 'Reconciling', 'Stalled'].map((type) => {
        const c = cond(s, type);
        return `${type}=${c?.status} ${c?.reason} @${c?.observedGeneration}`;
      });
    assert.deepEqual(kstatus(databaseStatus(db, servers(2), { image: 'postgres:16', now })), [
      'Ready=False Provisioning @2',
      'Reconciling=True RollingOut @2',
      'Stalled=False Progressing @2',
    ]);
    assert.deepEqual(kstatus(databaseStatus(db, {}, { image: 'postgres:16', now })), [
      'Ready=False Pending @2',
      'Reconciling=True Pending @2',
      'Stalled=False Progressing @2',
    ]);
    assert.deepEqual(kstatus(databaseStatus(db, servers(3), { image: 'postgres:16', now })), [
      'Ready=True Available @2',
      'Reconciling=False Reconciled @2',
      'Stalled=False Reconciled @2',
    ]);
    assert.deepEqual(kstatus(databaseStatus(db, {}, { image: 'postgres:16', now, failure: 'quota exceeded' })), [
      'Ready=False Pending @2',
      'Reconciling=False Stalled @2',
      'Stalled=True ApplyFailed @2',
    ]);
  });
});
