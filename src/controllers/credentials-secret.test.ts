import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { DatabaseResource } from '../../constructs/index.js';
import { databaseIdentifier, generatePassword, renderCredentialsSecret } from './credentials-secret.js';

const database = (engine: 'postgresql' | 'mysql'): DatabaseResource => ({
  apiVersion: 'mycompany.com/v1',
  kind: 'Database',
  metadata: { name: 'myapp-db', namespace: 'shop', uid: 'uid-1' },
  spec: { engine, version: '16', storage: '1Gi', replicas: 1 },
});

describe('credentials', () => {
  it('generates long alphanumeric passwords from the CSPRNG, different every time', () => {
    const passwords = Array.from({ length: 200 }, () => generatePassword());
    for (const p of passwords) assert.match(p, /^[A-Za-z0-9]{40}$/);
    assert.equal(new Set(passwords).size, passwords.length);
    // Every character class shows up: the draw covers the whole alphabet.
    const all = passwords.join('');
    for (const c of ['A', 'z', '0', '9']) assert.ok(all.includes(c));
    assert.throws(() => generatePassword(31), /at least 32/);
    assert.equal(generatePassword(64).length, 64);
  });

  it('renders an immutable Secret owned by the Database (uid) with username, password, database, host, port, uri and replication', () => {
    const secret = renderCredentialsSecret(database('postgresql'), 'p'.repeat(40), 'r'.repeat(40));
    assert.equal(secret.metadata.name, 'myapp-db-credentials');
    assert.equal(secret.immutable, true);
    assert.deepEqual(secret.metadata.ownerReferences, [
      { apiVersion: 'mycompany.com/v1', kind: 'Database', name: 'myapp-db', uid: 'uid-1', controller: true, blockOwnerDeletion: true },
    ]);
    assert.equal(secret.metadata.labels?.['mycompany.com/database'], 'myapp-db');
    assert.deepEqual(secret.stringData, {
      username: 'myapp_db',
      password: 'p'.repeat(40),
      database: 'myapp_db',
      host: 'myapp-db.shop.svc.cluster.local',
      port: '5432',
      uri: `postgresql://myapp_db:${'p'.repeat(40)}@myapp-db.shop.svc.cluster.local:5432/myapp_db`,
      'replication-username': 'replicator',
      'replication-password': 'r'.repeat(40),
    });
    const mysql = renderCredentialsSecret(database('mysql'), 'q'.repeat(40), 'r'.repeat(40)).stringData as Record<string, string>;
    assert.equal(mysql.port, '3306');
    assert.match(mysql.uri!, /^mysql:\/\//);
    assert.equal(databaseIdentifier('a-b-c'), 'a_b_c');
  });
});
