import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import https from 'node:https';
import { TlsIdentityAgent } from './tls-identity-agent.js';

const ca = Buffer.from(`-----BEGIN CERTIFICATE-----\n${'A'.repeat(1200)}\n-----END CERTIFICATE-----\n`);

describe('TlsIdentityAgent', () => {
  it('keys its pool by host, port and server name only, not by its CA, certificate and key', () => {
    const agent = new TlsIdentityAgent({ keepAlive: true, ca, rejectUnauthorized: true });
    const request = { ...agent.options, host: '10.0.0.1', port: 6443 };
    assert.equal(agent.getName(request), '10.0.0.1:6443:');
    assert.equal(agent.getName({ ...request, servername: 'kubernetes' }), '10.0.0.1:6443::kubernetes');
    assert.equal(agent.getName({ ...request, servername: '10.0.0.1' }), '10.0.0.1:6443:');
    assert.ok(new https.Agent({ ca }).getName(request).length > 1000, "node's own key carries the CA");
    agent.destroy();
  });
});
