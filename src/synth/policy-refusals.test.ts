// Each refusal of the rendering policy, as a hostile repository author would try it: what a
// `.preview/main.ts` can put in its output to reach past its namespace.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Manifest } from '../../constructs/index.js';
import { AllowedKinds } from './policy-allowed-kinds.js';
import { checkRenderedObjects, formatPolicyViolations, type RenderPolicy } from './policy-rendered-objects.js';

const namespace = 'pr-7-app-1234';
const host = 'app-pr-7.preview.example.com';
const policy: RenderPolicy = {
  namespace, host, allowedKinds: new AllowedKinds(), podSecurity: 'restricted', ingressClassName: 'nginx',
  certificateIssuer: { name: 'preview-issuer', kind: 'ClusterIssuer' },
};

const check = (objects: Manifest[], overrides: Partial<RenderPolicy> = {}) => checkRenderedObjects(objects, { ...policy, ...overrides });
const rules = (objects: Manifest[], overrides: Partial<RenderPolicy> = {}) => check(objects, overrides).violations.map((v) => `${v.rule} ${v.object}`);

const service = (name: string, spec: object): Manifest => ({ apiVersion: 'v1', kind: 'Service', metadata: { name }, spec });
const ingress = (annotations: Record<string, string>, spec: object = {}): Manifest => ({
  apiVersion: 'networking.k8s.io/v1', kind: 'Ingress', metadata: { name: 'web', annotations },
  spec: { ingressClassName: 'nginx', rules: [{ host, http: { paths: [{ path: '/', pathType: 'Prefix', backend: { service: { name: 'web', port: { number: 80 } } } }] } }], ...spec },
});
const certificate = (spec: object): Manifest => ({
  apiVersion: 'cert-manager.io/v1', kind: 'Certificate', metadata: { name: 'tls' },
  spec: { secretName: 'tls', dnsNames: [host], issuerRef: { name: 'preview-issuer', kind: 'ClusterIssuer', group: 'cert-manager.io' }, ...spec },
});
const role = (rules_: object[]): Manifest => ({ apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'Role', metadata: { name: 'r' }, rules: rules_ });

describe('the rendering policy refuses', () => {
  it('an ExternalName Service aliasing the API server, whatever the settings allow', () => {
    const alias = service('kubernetes', { type: 'ExternalName', externalName: 'kubernetes.default.svc.cluster.local' });
    assert.deepEqual(rules([alias]), ['service-external-name Service kubernetes']);
    assert.deepEqual(rules([alias], { allowedServiceTypes: ['LoadBalancer', 'NodePort'] }), ['service-external-name Service kubernetes']);
    assert.match(formatPolicyViolations(check([alias]).violations), /^Service kubernetes: type ExternalName makes .*"kubernetes.default.svc.cluster.local".* \[service-external-name\]$/);
  });

  it('LoadBalancer and NodePort Services unless the operator allows them; externalIPs always', () => {
    const exposed = [service('lb', { type: 'LoadBalancer', ports: [{ port: 80 }] }), service('np', { type: 'NodePort', ports: [{ port: 80, nodePort: 30080 }] })];
    assert.deepEqual(rules(exposed), ['service-type Service lb', 'service-type Service np']);
    assert.deepEqual(rules(exposed, { allowedServiceTypes: ['NodePort'] }), ['service-type Service lb']);
    assert.deepEqual(rules([service('ip', { externalIPs: ['10.96.0.1'] })], { allowedServiceTypes: ['LoadBalancer'] }), ['service-external-ips Service ip']);
  });

  it('an Ingress of another class, by field or by the legacy annotation', () => {
    assert.deepEqual(rules([ingress({}, { ingressClassName: 'internal-admin' })]), ['ingress-class Ingress.networking.k8s.io web']);
    assert.deepEqual(rules([ingress({ 'kubernetes.io/ingress.class': 'internal-admin' })]), ['ingress-class Ingress.networking.k8s.io web']);
  });

  it('an Ingress without a class gets the operator\'s (the cluster\'s default class may be another)', () => {
    const plain = ingress({}, { ingressClassName: undefined });
    const result = check([plain]);
    assert.deepEqual(result.violations, []);
    assert.equal((result.objects[0]!.spec as { ingressClassName: string }).ingressClassName, 'nginx');
    assert.equal((check([plain], { ingressClassName: 'previews' }).objects[0]!.spec as { ingressClassName: string }).ingressClassName, 'previews');
  });

  it('snippet and other dangerous Ingress annotations, even when the operator lists them', () => {
    const snippets = ingress({
      'nginx.ingress.kubernetes.io/server-snippet': 'location /x { proxy_pass http://kubernetes.default.svc; }',
      'nginx.ingress.kubernetes.io/configuration-snippet': 'more_set_headers "X: y";',
      'nginx.ingress.kubernetes.io/auth-url': 'http://169.254.169.254/latest/meta-data/',
      'nginx.ingress.kubernetes.io/auth-tls-secret': 'kube-system/some-secret',
      'nginx.ingress.kubernetes.io/server-alias': 'www.example.com',
      'nginx.org/server-snippets': 'return 200;',
      'cert-manager.io/cluster-issuer': 'letsencrypt-prod',
    });
    const everything = { ingressAnnotations: ['nginx.ingress.kubernetes.io/server-snippet', 'cert-manager.io/cluster-issuer'] };
    const result = check([snippets], everything);
    assert.equal(result.violations.length, 7);
    assert.ok(result.violations.every((v) => v.rule === 'ingress-annotation' && /is never allowed/.test(v.message)), formatPolicyViolations(result.violations));
  });

  it('Ingress annotations outside the allow-list, and allowed ones with nginx syntax in their value', () => {
    assert.deepEqual(rules([ingress({ 'nginx.ingress.kubernetes.io/whitelist-source-range': '0.0.0.0/0' })]), ['ingress-annotation Ingress.networking.k8s.io web']);
    assert.deepEqual(rules([ingress({ 'nginx.ingress.kubernetes.io/whitelist-source-range': '0.0.0.0/0' })], {
      ingressAnnotations: ['nginx.ingress.kubernetes.io/whitelist-source-range'],
    }), []);
    const injected = ingress({ 'nginx.ingress.kubernetes.io/rewrite-target': '/$1;\n}\nserver { listen 81; }' });
    assert.deepEqual(rules([injected]), ['ingress-annotation Ingress.networking.k8s.io web']);
    assert.deepEqual(rules([ingress({ 'nginx.ingress.kubernetes.io/rewrite-target': '/$2', 'nginx.ingress.kubernetes.io/proxy-body-size': '64m' })]), []);
  });

  it('a CA certificate from the preview issuer', () => {
    assert.deepEqual(rules([certificate({ isCA: true })]), ['certificate-ca Certificate.cert-manager.io tls']);
    assert.deepEqual(rules([certificate({ usages: ['digital signature', 'cert sign'] })]), ['certificate-ca Certificate.cert-manager.io tls']);
  });

  it('certificates naming anything but the environment\'s hosts, or for clients', () => {
    assert.deepEqual(rules([certificate({
      uris: ['spiffe://cluster.local/ns/kube-system/sa/admin'], ipAddresses: ['10.96.0.1'], emailAddresses: ['admin@example.com'],
      otherNames: [{ oid: '1.3.6.1.4.1.311.20.2.3', utf8Value: 'admin@corp' }], literalSubject: 'CN=kubernetes-admin,O=system:masters',
    })]), Array(5).fill('certificate-san Certificate.cert-manager.io tls'));
    assert.deepEqual(rules([certificate({ usages: ['client auth'] })]), ['certificate-usage Certificate.cert-manager.io tls']);
    assert.deepEqual(rules([certificate({ dnsNames: [host, 'kubernetes.default.svc'] })]), ['foreign-host Certificate.cert-manager.io tls']);
    assert.deepEqual(rules([certificate({ issuerRef: { name: 'preview-issuer', kind: 'ClusterIssuer', group: 'awspca.cert-manager.io' } })]),
      ['certificate-issuer Certificate.cert-manager.io tls']);
  });

  it('a Secret that asks for a ServiceAccount token', () => {
    assert.deepEqual(rules([
      { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'tok', annotations: { 'kubernetes.io/service-account.name': 'default' } }, type: 'kubernetes.io/service-account-token' },
      { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'sneaky', annotations: { 'kubernetes.io/service-account.name': 'default' } }, type: 'Opaque' },
    ]), ['service-account-token Secret tok', 'service-account-token Secret tok', 'service-account-token Secret sneaky']);
  });

  it('ServiceAccounts and pods that would mount an API token, unless the operator allows it', () => {
    const pod = (spec: object): Manifest => ({
      apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p' },
      spec: {
        securityContext: { runAsNonRoot: true, seccompProfile: { type: 'RuntimeDefault' } },
        containers: [{ name: 'c', image: 'x', securityContext: { allowPrivilegeEscalation: false, capabilities: { drop: ['ALL'] } } }],
        ...spec,
      },
    });
    const tokens = [
      { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'bot' } },
      pod({ automountServiceAccountToken: true }),
      { ...pod({ volumes: [{ name: 't', projected: { sources: [{ serviceAccountToken: { path: 'token', audience: 'api' } }] } }] }), metadata: { name: 'q' } },
    ];
    assert.deepEqual(rules(tokens), ['service-account-automount ServiceAccount bot', 'service-account-automount Pod p', 'service-account-automount Pod q']);
    assert.deepEqual(rules(tokens, { allowTokenAutomount: true }), []);
    assert.deepEqual(rules([{ apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'bot' }, automountServiceAccountToken: false }, pod({})]), []);
  });

  it('a Role that lets the default ServiceAccount delete the NetworkPolicy, raise the quota or drop the LimitRange', () => {
    const lift = role([
      { apiGroups: ['networking.k8s.io'], resources: ['networkpolicies'], verbs: ['get', 'delete'] },
      { apiGroups: [''], resources: ['resourcequotas', 'limitranges'], verbs: ['update', 'delete'] },
    ]);
    const binding: Manifest = {
      apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'RoleBinding', metadata: { name: 'b' },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'r' }, subjects: [{ kind: 'ServiceAccount', name: 'default' }],
    };
    assert.deepEqual(rules([lift, binding]), Array(3).fill('rbac-guard-resource Role.rbac.authorization.k8s.io r'));
  });

  it('Roles with wildcards, privileged verbs, RBAC or token requests', () => {
    assert.deepEqual(rules([role([
      { apiGroups: ['*'], resources: ['pods'], verbs: ['get'] },
      { apiGroups: ['rbac.authorization.k8s.io'], resources: ['roles'], verbs: ['bind', 'escalate'] },
      { apiGroups: [''], resources: ['serviceaccounts/token'], verbs: ['create'] },
      { apiGroups: ['rbac.authorization.k8s.io'], resources: ['rolebindings'], verbs: ['create'] },
      { apiGroups: [''], resources: ['users'], verbs: ['impersonate'] },
    ])]).map((r) => r.split(' ')[0]), [
      'rbac-wildcard', 'rbac-privileged-verb', 'rbac-privileged-verb', 'rbac-guard-resource', 'rbac-guard-resource', 'rbac-guard-resource', 'rbac-privileged-verb',
    ]);
  });

  it('Roles that let pods write at run time what a rendering may not (Services, Ingresses, Secrets, Certificates, ...)', () => {
    assert.deepEqual(rules([role([
      { apiGroups: [''], resources: ['services', 'services/status'], verbs: ['create', 'patch'] },
      { apiGroups: ['networking.k8s.io'], resources: ['ingresses'], verbs: ['create'] },
      { apiGroups: ['cert-manager.io'], resources: ['certificates'], verbs: ['update'] },
    ])]).map((r) => r.split(' ')[0]), Array(4).fill('rbac-checked-write'));
  });

  it('(but a Role granting ordinary namespaced resources to the namespace\'s own ServiceAccount passes)', () => {
    assert.deepEqual(rules([role([
      { apiGroups: [''], resources: ['configmaps', 'pods', 'pods/log', 'services', 'secrets'], verbs: ['get', 'list', 'watch'] },
      { apiGroups: ['batch'], resources: ['jobs'], verbs: ['create', 'delete'] },
      { apiGroups: ['coordination.k8s.io'], resources: ['leases'], verbs: ['get', 'create', 'update'] },
    ])]), []);
  });

  it('a rendering of 20,000 ConfigMaps, with one violation', () => {
    const flood = Array.from({ length: 20_000 }, (_, i): Manifest => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: `flood-${i}` }, data: {} }));
    const result = check(flood);
    assert.deepEqual(result.violations, [{ object: 'the rendering', rule: 'too-many-objects', message: 'the rendering has 20000 objects; at most 500 are allowed' }]);
    assert.deepEqual(result.objects, []);
    assert.equal(check(flood.slice(0, 600), { limits: { maxObjects: 1000, maxBytes: 1 << 22, maxObjectBytes: 1 << 19, maxDepth: 64 } }).violations.length, 0);
  });

  it('a 20,000-level nested object, before anything clones it', () => {
    let deep: Record<string, unknown> = {};
    for (let i = 0; i < 20_000; i++) deep = { a: deep };
    const result = check([{ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'deep' }, data: deep }]);
    assert.deepEqual(result.violations.map((v) => v.rule), ['too-deep']);
    assert.match(formatPolicyViolations(result.violations), /^the rendering: the rendering is nested deeper than 64 levels in object 0 \(ConfigMap deep\) \[too-deep\]$/);
  });

  it('a rendering too large in bytes', () => {
    const big: Manifest = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'big' }, data: { blob: 'x'.repeat(600 * 1024) } };
    assert.deepEqual(rules([big]), ['too-large the rendering']);
  });
});
