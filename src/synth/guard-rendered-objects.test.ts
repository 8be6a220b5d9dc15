import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Manifest } from '../../constructs/index.js';
import { AllowedKinds } from './guard-allowed-kinds.js';
import { checkRenderedObjects, type RenderPolicy } from './guard-rendered-objects.js';

const policy: RenderPolicy = {
  namespace: 'pr-7-app-1234',
  host: 'app-pr-7.preview.example.com',
  allowedKinds: new AllowedKinds(),
  podSecurity: 'restricted',
  ingressClassName: 'nginx',
  certificateIssuer: { name: 'preview-issuer', kind: 'ClusterIssuer' },
};

const configMap = (name: string, namespace?: string): Manifest => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { name, ...(namespace ? { namespace } : {}) },
  data: {},
});
const rules = (objects: Manifest[]) => checkRenderedObjects(objects, policy).violations.map((v) => `${v.rule} ${v.object}`);

describe('policy on rendered objects', () => {
  it("puts objects without a namespace into the environment's and strips server fields and status", () => {
    const result = checkRenderedObjects(
      [{ ...configMap('a'), status: { x: 1 }, metadata: { name: 'a', uid: 'u', resourceVersion: '5' } }],
      policy,
    );
    assert.deepEqual(result.violations, []);
    assert.deepEqual(result.objects, [
      { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'a', namespace: policy.namespace }, data: {} },
    ]);
  });

  it('rejects objects in another namespace, cluster-scoped kinds and kinds not allowed', () => {
    assert.deepEqual(
      rules([
        configMap('a', 'kube-system'),
        { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRoleBinding', metadata: { name: 'root' }, roleRef: {}, subjects: [] },
        { apiVersion: 'apps/v1', kind: 'DaemonSet', metadata: { name: 'd' }, spec: {} },
        { apiVersion: 'networking.k8s.io/v1', kind: 'NetworkPolicy', metadata: { name: 'open' }, spec: {} },
      ]),
      [
        'other-namespace ConfigMap kube-system/a',
        'cluster-scoped ClusterRoleBinding.rbac.authorization.k8s.io root',
        'kind-not-allowed DaemonSet.apps d',
        'kind-not-allowed NetworkPolicy.networking.k8s.io open',
      ],
    );
  });

  it('rejects bindings to cluster roles and subjects outside the namespace', () => {
    const binding = (roleRef: object, subjects: object[]): Manifest => ({
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'RoleBinding',
      metadata: { name: 'b' },
      roleRef,
      subjects,
    });
    assert.deepEqual(
      rules([binding({ kind: 'Role', name: 'r', apiGroup: 'rbac.authorization.k8s.io' }, [{ kind: 'ServiceAccount', name: 'default' }])]),
      [],
    );
    assert.deepEqual(
      rules([
        binding({ kind: 'ClusterRole', name: 'cluster-admin', apiGroup: 'rbac.authorization.k8s.io' }, [
          { kind: 'ServiceAccount', name: 'default', namespace: 'kube-system' },
          { kind: 'Group', name: 'system:authenticated' },
        ]),
      ]),
      [
        'rbac-cluster-role RoleBinding.rbac.authorization.k8s.io b',
        'rbac-subject RoleBinding.rbac.authorization.k8s.io b',
        'rbac-subject RoleBinding.rbac.authorization.k8s.io b',
      ],
    );
  });

  it('rejects a privileged pod template with the path to the field', () => {
    const result = checkRenderedObjects(
      [
        {
          apiVersion: 'apps/v1',
          kind: 'Deployment',
          metadata: { name: 'miner' },
          spec: {
            template: {
              spec: {
                containers: [
                  {
                    name: 'c',
                    image: 'x',
                    securityContext: {
                      privileged: true,
                      allowPrivilegeEscalation: false,
                      runAsNonRoot: true,
                      seccompProfile: { type: 'RuntimeDefault' },
                      capabilities: { drop: ['ALL'] },
                    },
                  },
                ],
              },
            },
          },
        },
      ],
      policy,
    );
    assert.equal(result.violations.length, 1);
    assert.equal(result.violations[0]!.rule, 'pod-security');
    assert.match(
      result.violations[0]!.message,
      /spec\.template\.spec\.containers\[0\]\.securityContext\.privileged: container "c" must not be privileged/,
    );
  });

  it("keeps Ingresses and Certificates to the environment's host and issuer", () => {
    assert.deepEqual(
      rules([
        {
          apiVersion: 'networking.k8s.io/v1',
          kind: 'Ingress',
          metadata: { name: 'ok' },
          spec: { rules: [{ host: policy.host }, { host: `api.${policy.host}` }], tls: [{ hosts: [policy.host] }] },
        },
        {
          apiVersion: 'networking.k8s.io/v1',
          kind: 'Ingress',
          metadata: { name: 'steal' },
          spec: { rules: [{ host: 'www.example.com' }, {}] },
        },
        {
          apiVersion: 'cert-manager.io/v1',
          kind: 'Certificate',
          metadata: { name: 'c' },
          spec: { dnsNames: ['example.com'], issuerRef: { name: 'letsencrypt-prod', kind: 'ClusterIssuer' } },
        },
      ]),
      [
        'foreign-host Ingress.networking.k8s.io steal',
        'foreign-host Ingress.networking.k8s.io steal',
        'foreign-host Certificate.cert-manager.io c',
        'certificate-issuer Certificate.cert-manager.io c',
      ],
    );
  });

  it('rejects externalIPs, claims of named volumes, owner references and duplicates', () => {
    assert.deepEqual(
      rules([
        { apiVersion: 'v1', kind: 'Service', metadata: { name: 's' }, spec: { externalIPs: ['10.0.0.1'] } },
        { apiVersion: 'v1', kind: 'PersistentVolumeClaim', metadata: { name: 'p' }, spec: { volumeName: 'someone-elses' } },
        { ...configMap('o'), metadata: { name: 'o', ownerReferences: [] } },
        configMap('twice'),
        configMap('twice', policy.namespace),
      ]),
      [
        'service-external-ips Service s',
        'volume-binding PersistentVolumeClaim p',
        'owner-references ConfigMap o',
        `malformed ConfigMap ${policy.namespace}/twice`,
      ],
    );
  });

  it('the allow-list is configurable and refuses cluster-scoped or malformed entries', () => {
    const custom = new AllowedKinds(['ConfigMap', 'Widget.example.com']);
    assert.ok(custom.has({ group: 'example.com', kind: 'Widget' }));
    assert.ok(!custom.has({ group: '', kind: 'Secret' }));
    assert.throws(() => new AllowedKinds(['ClusterRole.rbac.authorization.k8s.io']), /cluster-scoped/);
    assert.throws(() => new AllowedKinds(['apps/v1 Deployment']), /Kind or Kind.group/);
  });
});
