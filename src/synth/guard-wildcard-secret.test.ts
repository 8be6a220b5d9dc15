// The operator's copy of the wildcard certificate, as a hostile repository would go for it:
// writing a Secret or a Certificate of its name, or mounting it into a pod to read the key that
// serves every preview host. Referencing it from the preview's Ingress stays allowed.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { wildcardTlsSecretName, type Manifest } from '../../constructs/index.js';
import { AllowedKinds } from './guard-allowed-kinds.js';
import { checkRenderedObjects, type RenderPolicy } from './guard-rendered-objects.js';

const host = 'app-pr-7.preview.example.com';
const policy: RenderPolicy = {
  namespace: 'pr-7-app',
  host,
  allowedKinds: new AllowedKinds(),
  podSecurity: 'restricted',
  ingressClassName: 'nginx',
  certificateIssuer: { name: 'preview-issuer', kind: 'ClusterIssuer' },
};
const rules = (objects: Manifest[]) => checkRenderedObjects(objects, policy).violations.map((v) => `${v.rule} ${v.object}`);
const violations = (objects: Manifest[]) => checkRenderedObjects(objects, policy).violations;

const container = (extra: object) => ({
  name: 'app',
  image: 'app:1',
  securityContext: {
    runAsNonRoot: true,
    allowPrivilegeEscalation: false,
    capabilities: { drop: ['ALL'] },
    seccompProfile: { type: 'RuntimeDefault' },
  },
  ...extra,
});
const deployment = (podSpec: object): Manifest => ({
  apiVersion: 'apps/v1',
  kind: 'Deployment',
  metadata: { name: 'web' },
  spec: { selector: { matchLabels: { app: 'web' } }, template: { metadata: { labels: { app: 'web' } }, spec: podSpec } },
});

describe("the wildcard certificate's copy is the operator's", () => {
  it('a rendered Secret of its name is refused, whatever its type', () => {
    for (const type of ['kubernetes.io/tls', 'Opaque']) {
      const secret: Manifest = { apiVersion: 'v1', kind: 'Secret', metadata: { name: wildcardTlsSecretName }, type, data: {} };
      assert.deepEqual(rules([secret]), [`reserved-secret Secret ${wildcardTlsSecretName}`]);
    }
    const own: Manifest = { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'app-tls' }, type: 'kubernetes.io/tls', data: {} };
    assert.deepEqual(rules([own]), [], "a Secret of another name is the repository's own");
  });

  it('a Certificate that would have cert-manager write it is refused', () => {
    const certificate: Manifest = {
      apiVersion: 'cert-manager.io/v1',
      kind: 'Certificate',
      metadata: { name: 'steal' },
      spec: { secretName: wildcardTlsSecretName, dnsNames: [host], issuerRef: { name: 'preview-issuer', kind: 'ClusterIssuer' } },
    };
    assert.deepEqual(rules([certificate]), ['reserved-secret Certificate.cert-manager.io steal']);
  });

  it('a pod may not mount it, project it, or read it into env', () => {
    const volumes = [
      { name: 'a', secret: { secretName: wildcardTlsSecretName } },
      { name: 'b', projected: { sources: [{ secret: { name: wildcardTlsSecretName } }] } },
    ];
    const env = [{ name: 'KEY', valueFrom: { secretKeyRef: { name: wildcardTlsSecretName, key: 'tls.key' } } }];
    const envFrom = [{ secretRef: { name: wildcardTlsSecretName } }];
    const found = violations([deployment({ volumes, containers: [container({ env, envFrom })] })]);
    assert.deepEqual(
      found.map((v) => v.message.split(' names ')[0]),
      [
        'spec.template.spec.volumes[0].secret',
        'spec.template.spec.volumes[1].projected.sources[0].secret',
        'spec.template.spec.containers[0].env[0].valueFrom.secretKeyRef',
        'spec.template.spec.containers[0].envFrom[0].secretRef',
      ],
    );
    assert.ok(found.every((v) => v.rule === 'reserved-secret'));
    const initContainers = [container({ name: 'init', envFrom })];
    assert.deepEqual(rules([deployment({ initContainers, containers: [container({})] })]), ['reserved-secret Deployment.apps web']);
  });

  it("the preview's Ingress may serve it", () => {
    const ingress: Manifest = {
      apiVersion: 'networking.k8s.io/v1',
      kind: 'Ingress',
      metadata: { name: 'preview' },
      spec: {
        ingressClassName: 'nginx',
        tls: [{ hosts: [host], secretName: wildcardTlsSecretName }],
        rules: [
          { host, http: { paths: [{ path: '/', pathType: 'Prefix', backend: { service: { name: 'web', port: { number: 80 } } } }] } },
        ],
      },
    };
    assert.deepEqual(rules([ingress]), []);
  });
});
