import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { KubeObject } from '../kube/index.js';
import { certificateIssuer, issuerProblem } from './certificate-issuers.js';

const certificate = (issuerRef: Record<string, string>): KubeObject => ({
  apiVersion: 'cert-manager.io/v1',
  kind: 'Certificate',
  metadata: { name: 'preview-tls', namespace: 'ns' },
  spec: { issuerRef },
});
const issuer = (conditions: Record<string, string>[]): KubeObject => ({
  apiVersion: 'cert-manager.io/v1',
  kind: 'ClusterIssuer',
  metadata: { name: 'preview-issuer' },
  status: { conditions },
});

describe('certificate issuers', () => {
  it("reads the issuer a Certificate names; cert-manager's default kind is Issuer; other groups are not cert-manager's", () => {
    const named = certificate({ name: 'preview-issuer', kind: 'ClusterIssuer', group: 'cert-manager.io' });
    assert.deepEqual(certificateIssuer(named), { kind: 'ClusterIssuer', name: 'preview-issuer' });
    assert.deepEqual(certificateIssuer(certificate({ name: 'local' })), { kind: 'Issuer', name: 'local' });
    assert.equal(certificateIssuer(certificate({ name: 'x', kind: 'AWSPCAIssuer', group: 'awspca.cert-manager.io' })), undefined);
    assert.equal(certificateIssuer({ apiVersion: 'cert-manager.io/v1', kind: 'Certificate', metadata: { name: 'c' } }), undefined);
  });

  it('names an issuer that does not exist or is not Ready, and says nothing of one it could not read or that is Ready', () => {
    const ref = { kind: 'ClusterIssuer', name: 'preview-issuer' } as const;
    assert.equal(issuerProblem(ref, null), 'ClusterIssuer preview-issuer does not exist');
    const keyPairMissing = 'Error getting keypair for CA issuer: secret "ca" not found';
    assert.equal(
      issuerProblem(ref, issuer([{ type: 'Ready', status: 'False', reason: 'ErrGetKeyPair', message: keyPairMissing }])),
      `ClusterIssuer preview-issuer is not ready: ${keyPairMissing}`,
    );
    assert.equal(issuerProblem(ref, issuer([])), 'ClusterIssuer preview-issuer is not ready');
    assert.equal(issuerProblem(ref, issuer([{ type: 'Ready', status: 'True' }])), undefined);
    assert.equal(issuerProblem(ref, undefined), undefined);
  });
});
