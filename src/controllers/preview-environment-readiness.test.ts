import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { KubeObject, ObjectRef } from '../kube/index.js';
import { certificateCondition, environmentReadiness, resourceReadiness } from './preview-environment-readiness.js';

const host = 'api-pr-1.preview.example.com';
const ref = (apiVersion: string, kind: string, name: string): ObjectRef => ({ apiVersion, kind, name, namespace: 'ns' });
const withReady = (generation: number, status: 'True' | 'False', extra: Record<string, unknown> = {}, message = 'm'): KubeObject => ({
  apiVersion: 'x',
  kind: 'x',
  metadata: { name: 'x', generation },
  status: { ...extra, conditions: [{ type: 'Ready', status, reason: 'R', message }] },
});

describe('environment readiness', () => {
  it('an Algorithm is ready when its controller says so for the generation applied', () => {
    const algorithm = ref('ai.alien6.io/v1', 'Algorithm', 'api');
    assert.equal(resourceReadiness(algorithm, withReady(2, 'True', { observedGeneration: 2 }), host).ready, true);
    const stale = resourceReadiness(algorithm, withReady(3, 'True', { observedGeneration: 2 }), host);
    assert.deepEqual([stale.ready, stale.message], [false, 'waiting for the Algorithm controller to observe generation 3']);
    assert.deepEqual(
      resourceReadiness(algorithm, withReady(1, 'False', {}, '0 of 1 replicas ready'), host).message,
      '0 of 1 replicas ready',
    );
    assert.deepEqual(resourceReadiness(algorithm, undefined, host), {
      apiVersion: 'ai.alien6.io/v1',
      kind: 'Algorithm',
      name: 'api',
      ready: false,
      message: 'not created yet',
    });
  });

  it("a Certificate is ready with cert-manager's Ready condition, an Ingress once it routes the host", () => {
    const certificate = ref('cert-manager.io/v1', 'Certificate', 'preview-tls');
    assert.equal(
      resourceReadiness(certificate, { apiVersion: 'x', kind: 'x', metadata: { name: 'c', generation: 1 } }, host).message,
      'waiting for cert-manager',
    );
    assert.equal(resourceReadiness(certificate, withReady(5, 'True'), host).ready, true);
    // A note (what its issuer lacks) leads the message of a Certificate not issued, never of one issued.
    const issuerMissing = 'ClusterIssuer preview-issuer does not exist';
    const unissued = withReady(1, 'False', {}, 'Issuing certificate as Secret does not exist');
    assert.equal(
      resourceReadiness(certificate, unissued, host, issuerMissing).message,
      'ClusterIssuer preview-issuer does not exist (cert-manager: Issuing certificate as Secret does not exist)',
    );
    assert.equal(resourceReadiness(certificate, withReady(1, 'True', {}, 'up to date'), host, issuerMissing).message, 'up to date');
    const ingress = ref('networking.k8s.io/v1', 'Ingress', 'preview');
    const live = (h: string, status?: unknown): KubeObject => ({
      apiVersion: 'x',
      kind: 'x',
      metadata: { name: 'preview' },
      spec: { rules: [{ host: h }] },
      status,
    });
    assert.deepEqual(resourceReadiness(ingress, live(host), host).ready, true);
    assert.equal(
      resourceReadiness(ingress, live(host, { loadBalancer: { ingress: [{ ip: '10.0.0.7' }] } }), host).message,
      `${host} at 10.0.0.7`,
    );
    assert.equal(resourceReadiness(ingress, live('other.example.com'), host).ready, false);
  });

  it('only kinds with a notion of readiness count, in the order applied', () => {
    const applied = [ref('v1', 'ConfigMap', 'c'), ref('ai.alien6.io/v1', 'Algorithm', 'api'), ref('mycompany.com/v1', 'Database', 'db')];
    const result = environmentReadiness(applied, (r) => (r.kind === 'Algorithm' ? withReady(1, 'True') : undefined), host);
    assert.deepEqual(
      result.resources.map((r) => [r.kind, r.ready]),
      [
        ['Algorithm', true],
        ['Database', false],
      ],
    );
    assert.equal(result.ready, false);
  });

  it("a resource's message is plain and within the CRD's 4,096 characters, whatever another controller wrote", () => {
    const certificate = ref('cert-manager.io/v1', 'Certificate', 'preview-tls');
    const long = withReady(1, 'False', {}, `issuer answered: \u001b[2J${'x'.repeat(10_000)}`);
    const [resource] = environmentReadiness([certificate], () => long, host).resources;
    assert.equal(resource!.message!.length, 4096);
    assert.ok(resource!.message!.startsWith('issuer answered: [2Jxxx') && resource!.message!.endsWith('...'));
  });

  it('CertificateReady: plain HTTP without cert-manager, issued or not with it, absent when nothing is routed', () => {
    assert.equal(certificateCondition(false, false, [])?.reason, 'CertManagerNotInstalled');
    assert.match(certificateCondition(false, false, [])!.message, /served over plain HTTP/);
    assert.equal(certificateCondition(true, false, []), undefined);
    const tls = { apiVersion: 'cert-manager.io/v1', kind: 'Certificate', name: 'preview-tls' };
    assert.deepEqual(certificateCondition(true, true, [{ ...tls, ready: false, message: 'waiting for cert-manager' }]), {
      status: 'False',
      reason: 'NotIssued',
      message: 'preview-tls: waiting for cert-manager',
    });
    assert.equal(certificateCondition(true, true, [{ ...tls, ready: true }])?.status, 'True');
  });
});
