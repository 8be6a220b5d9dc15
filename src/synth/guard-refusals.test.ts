// Each refusal of the rendering policy, as a hostile repository author would try it: what a
// `.preview/main.ts` can put in its output to reach past its namespace.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Manifest } from '../../constructs/index.js';
import { AllowedKinds } from './guard-allowed-kinds.js';
import { ingressAnnotationSettingProblem } from './guard-ingress-annotations.js';
import { checkRenderedObjects, formatPolicyViolations, type RenderPolicy } from './guard-rendered-objects.js';

const namespace = 'pr-7-app-1234';
const host = 'app-pr-7.preview.example.com';
const policy: RenderPolicy = {
  namespace,
  host,
  allowedKinds: new AllowedKinds(),
  podSecurity: 'restricted',
  ingressClassName: 'nginx',
  certificateIssuer: { name: 'preview-issuer', kind: 'ClusterIssuer' },
};

const check = (objects: Manifest[], overrides: Partial<RenderPolicy> = {}) => checkRenderedObjects(objects, { ...policy, ...overrides });
const rules = (objects: Manifest[], overrides: Partial<RenderPolicy> = {}) =>
  check(objects, overrides).violations.map((v) => `${v.rule} ${v.object}`);

const service = (name: string, spec: object): Manifest => ({ apiVersion: 'v1', kind: 'Service', metadata: { name }, spec });
const ingress = (annotations: Record<string, string>, spec: object = {}): Manifest => ({
  apiVersion: 'networking.k8s.io/v1',
  kind: 'Ingress',
  metadata: { name: 'web', annotations },
  spec: {
    ingressClassName: 'nginx',
    rules: [{ host, http: { paths: [{ path: '/', pathType: 'Prefix', backend: { service: { name: 'web', port: { number: 80 } } } }] } }],
    ...spec,
  },
});
const certificate = (spec: object): Manifest => ({
  apiVersion: 'cert-manager.io/v1',
  kind: 'Certificate',
  metadata: { name: 'tls' },
  spec: {
    secretName: 'tls',
    dnsNames: [host],
    issuerRef: { name: 'preview-issuer', kind: 'ClusterIssuer', group: 'cert-manager.io' },
    ...spec,
  },
});
const role = (rules_: object[]): Manifest => ({
  apiVersion: 'rbac.authorization.k8s.io/v1',
  kind: 'Role',
  metadata: { name: 'r' },
  rules: rules_,
});

describe('the rendering policy refuses', () => {
  it('an ExternalName Service aliasing the API server, whatever the settings allow', () => {
    const alias = service('kubernetes', { type: 'ExternalName', externalName: 'kubernetes.default.svc.cluster.local' });
    assert.deepEqual(rules([alias]), ['service-external-name Service kubernetes']);
    assert.deepEqual(rules([alias], { allowedServiceTypes: ['LoadBalancer', 'NodePort'] }), ['service-external-name Service kubernetes']);
    assert.match(
      formatPolicyViolations(check([alias]).violations),
      /^Service kubernetes: type ExternalName makes .*"kubernetes.default.svc.cluster.local".* \[service-external-name\]$/,
    );
  });

  it('LoadBalancer and NodePort Services unless the operator allows them; externalIPs always', () => {
    const exposed = [
      service('lb', { type: 'LoadBalancer', ports: [{ port: 80 }] }),
      service('np', { type: 'NodePort', ports: [{ port: 80, nodePort: 30080 }] }),
    ];
    assert.deepEqual(rules(exposed), ['service-type Service lb', 'service-type Service np']);
    assert.deepEqual(rules(exposed, { allowedServiceTypes: ['NodePort'] }), ['service-type Service lb']);
    assert.deepEqual(rules([service('ip', { externalIPs: ['10.96.0.1'] })], { allowedServiceTypes: ['LoadBalancer'] }), [
      'service-external-ips Service ip',
    ]);
  });

  it('an Ingress of another class, by field or by the legacy annotation', () => {
    assert.deepEqual(rules([ingress({}, { ingressClassName: 'internal-admin' })]), ['ingress-class Ingress.networking.k8s.io web']);
    assert.deepEqual(rules([ingress({ 'kubernetes.io/ingress.class': 'internal-admin' })]), [
      'ingress-class Ingress.networking.k8s.io web',
    ]);
  });

  it("an Ingress without a class gets the operator's (the cluster's default class may be another)", () => {
    const plain = ingress({}, { ingressClassName: undefined });
    const result = check([plain]);
    assert.deepEqual(result.violations, []);
    assert.equal((result.objects[0]!.spec as { ingressClassName: string }).ingressClassName, 'nginx');
    assert.equal(
      (check([plain], { ingressClassName: 'previews' }).objects[0]!.spec as { ingressClassName: string }).ingressClassName,
      'previews',
    );
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
    assert.ok(
      result.violations.every((v) => v.rule === 'ingress-annotation' && /is never allowed/.test(v.message)),
      formatPolicyViolations(result.violations),
    );
  });

  it('Ingress annotations outside the allow-list, and allowed ones with nginx syntax in their value', () => {
    assert.deepEqual(rules([ingress({ 'nginx.ingress.kubernetes.io/whitelist-source-range': '0.0.0.0/0' })]), [
      'ingress-annotation Ingress.networking.k8s.io web',
    ]);
    assert.deepEqual(
      rules([ingress({ 'nginx.ingress.kubernetes.io/whitelist-source-range': '0.0.0.0/0' })], {
        ingressAnnotations: ['nginx.ingress.kubernetes.io/whitelist-source-range'],
      }),
      [],
    );
    const injected = ingress({ 'nginx.ingress.kubernetes.io/rewrite-target': '/$1;\n}\nserver { listen 81; }' });
    assert.deepEqual(rules([injected]), ['ingress-annotation Ingress.networking.k8s.io web']);
    assert.deepEqual(
      rules([ingress({ 'nginx.ingress.kubernetes.io/rewrite-target': '/$2', 'nginx.ingress.kubernetes.io/proxy-body-size': '64m' })]),
      [],
    );
  });

  it('a CA certificate from the preview issuer', () => {
    assert.deepEqual(rules([certificate({ isCA: true })]), ['certificate-ca Certificate.cert-manager.io tls']);
    assert.deepEqual(rules([certificate({ usages: ['digital signature', 'cert sign'] })]), [
      'certificate-ca Certificate.cert-manager.io tls',
    ]);
  });

  it("certificates naming anything but the environment's hosts, or for clients", () => {
    assert.deepEqual(
      rules([
        certificate({
          uris: ['spiffe://cluster.local/ns/kube-system/sa/admin'],
          ipAddresses: ['10.96.0.1'],
          emailAddresses: ['admin@example.com'],
          otherNames: [{ oid: '1.3.6.1.4.1.311.20.2.3', utf8Value: 'admin@corp' }],
          literalSubject: 'CN=kubernetes-admin,O=system:masters',
        }),
      ]),
      Array(5).fill('certificate-san Certificate.cert-manager.io tls'),
    );
    assert.deepEqual(rules([certificate({ usages: ['client auth'] })]), ['certificate-usage Certificate.cert-manager.io tls']);
    assert.deepEqual(rules([certificate({ dnsNames: [host, 'kubernetes.default.svc'] })]), [
      'foreign-host Certificate.cert-manager.io tls',
    ]);
    assert.deepEqual(
      rules([certificate({ issuerRef: { name: 'preview-issuer', kind: 'ClusterIssuer', group: 'awspca.cert-manager.io' } })]),
      ['certificate-issuer Certificate.cert-manager.io tls'],
    );
    // TLS off (--tls-issuer none): a cluster running cert-manager for other reasons has issuers (an internal CA,
    // a public one with its rate limits), none of them the previews'.
    const internal = certificate({ issuerRef: { name: 'corp-internal-ca', kind: 'ClusterIssuer' } });
    assert.deepEqual(rules([internal], { certificateIssuer: undefined }), ['certificate-issuer Certificate.cert-manager.io tls']);
    assert.match(formatPolicyViolations(check([internal], { certificateIssuer: undefined }).violations), /TLS is off: --tls-issuer none/);
  });

  it('a Secret that asks for a ServiceAccount token', () => {
    assert.deepEqual(
      rules([
        {
          apiVersion: 'v1',
          kind: 'Secret',
          metadata: { name: 'tok', annotations: { 'kubernetes.io/service-account.name': 'default' } },
          type: 'kubernetes.io/service-account-token',
        },
        {
          apiVersion: 'v1',
          kind: 'Secret',
          metadata: { name: 'sneaky', annotations: { 'kubernetes.io/service-account.name': 'default' } },
          type: 'Opaque',
        },
      ]),
      ['service-account-token Secret tok', 'service-account-token Secret tok', 'service-account-token Secret sneaky'],
    );
  });

  it('ServiceAccounts and pods that would mount an API token, unless the operator allows it', () => {
    const pod = (spec: object): Manifest => ({
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'p' },
      spec: {
        securityContext: { runAsNonRoot: true, seccompProfile: { type: 'RuntimeDefault' } },
        containers: [{ name: 'c', image: 'x', securityContext: { allowPrivilegeEscalation: false, capabilities: { drop: ['ALL'] } } }],
        ...spec,
      },
    });
    const tokens = [
      { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'bot' } },
      pod({ automountServiceAccountToken: true }),
      {
        ...pod({ volumes: [{ name: 't', projected: { sources: [{ serviceAccountToken: { path: 'token', audience: 'api' } }] } }] }),
        metadata: { name: 'q' },
      },
      // A cluster signer's certificate for the pod's identity (Kubernetes 1.35+): a credential like a token.
      {
        ...pod({
          volumes: [{ name: 'id', projected: { sources: [{ podCertificate: { signerName: 'example.com/spiffe', keyType: 'ED25519' } }] } }],
        }),
        metadata: { name: 'r' },
      },
    ];
    assert.deepEqual(rules(tokens), [
      'service-account-automount ServiceAccount bot',
      'service-account-automount Pod p',
      'service-account-automount Pod q',
      'service-account-automount Pod r',
    ]);
    assert.deepEqual(rules(tokens, { allowTokenAutomount: true }), []);
    assert.deepEqual(
      rules([{ apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'bot' }, automountServiceAccountToken: false }, pod({})]),
      [],
    );
  });

  it('a Role that lets the default ServiceAccount delete the NetworkPolicy, raise the quota or drop the LimitRange', () => {
    const lift = role([
      { apiGroups: ['networking.k8s.io'], resources: ['networkpolicies'], verbs: ['get', 'delete'] },
      { apiGroups: [''], resources: ['resourcequotas', 'limitranges'], verbs: ['update', 'delete'] },
    ]);
    const binding: Manifest = {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'RoleBinding',
      metadata: { name: 'b' },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'r' },
      subjects: [{ kind: 'ServiceAccount', name: 'default' }],
    };
    assert.deepEqual(rules([lift, binding]), Array(3).fill('rbac-guard-resource Role.rbac.authorization.k8s.io r'));
  });

  it('a Role that lets the default ServiceAccount patch its own Namespace (Pod Security, ownership) or delete ServiceAccounts', () => {
    const nsAdmin = role([
      { apiGroups: [''], resources: ['namespaces'], verbs: ['get', 'patch'] },
      { apiGroups: [''], resources: ['namespaces/status', 'namespaces/finalize'], verbs: ['update'] },
      { apiGroups: [''], resources: ['serviceaccounts'], verbs: ['get', 'delete'] },
    ]);
    assert.deepEqual(rules([nsAdmin]), [
      ...Array(3).fill('rbac-guard-resource Role.rbac.authorization.k8s.io r'),
      'rbac-checked-write Role.rbac.authorization.k8s.io r',
    ]);
    assert.match(formatPolicyViolations(check([nsAdmin]).violations), /rules\[0\] grants access to namespaces: the namespace's guards/);
    assert.deepEqual(rules([role([{ apiGroups: [''], resources: ['serviceaccounts'], verbs: ['get', 'list', 'watch'] }])]), []);
  });

  it('RoleBindings and Pods with fields the API server refuses only at their real write (they are never dry-run)', () => {
    const binding = (roleRef: object, subjects: object[]): Manifest => ({
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'RoleBinding',
      metadata: { name: 'b' },
      roleRef,
      subjects,
    });
    const ref = { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'reader' };
    const bad = [
      binding(ref, [{ kind: 'ServiceAccount', name: 'default', apiGroup: 'rbac.authorization.k8s.io' }]),
      { ...binding({ kind: 'Role', name: 'reader' }, [{ kind: 'ServiceAccount', name: 'default' }]), metadata: { name: 'c' } },
      {
        ...binding({ ...ref, name: '..' }, [{ kind: 'ServiceAccount' }, { kind: 'ServiceAccount', name: 'Not_A_Name' }]),
        metadata: { name: 'd' },
      },
    ];
    assert.deepEqual(
      rules(bad).map((r) => r.replace(' RoleBinding.rbac.authorization.k8s.io', '')),
      ['invalid-field b', 'invalid-field c', 'invalid-field d', 'invalid-field d', 'invalid-field d'],
    );
    assert.deepEqual(rules([binding(ref, [{ kind: 'ServiceAccount', name: 'default', apiGroup: '' }])]), []);
    const pod = (spec: object): Manifest => ({
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'p' },
      spec: { securityContext: { runAsNonRoot: true, seccompProfile: { type: 'RuntimeDefault' } }, ...spec },
    });
    const container = (name: unknown, image?: string) => ({
      name,
      image,
      securityContext: { allowPrivilegeEscalation: false, capabilities: { drop: ['ALL'] } },
    });
    const messages = check([
      pod({
        serviceAccountName: 'Runner',
        restartPolicy: 'Sometimes',
        containers: [container('web', 'x'), container('web', 'y'), container('Bad_Name')],
      }),
    ]).violations.map((v) => `${v.rule}: ${v.message}`);
    assert.deepEqual(messages, [
      'invalid-field: spec.serviceAccountName "Runner" is not a ServiceAccount name',
      'invalid-field: spec.restartPolicy "Sometimes" must be Always, OnFailure or Never',
      'invalid-field: spec.containers[1].name "web" is used by another container of the pod',
      'invalid-field: spec.containers[2].name "Bad_Name" is not a DNS label',
      'invalid-field: spec.containers[2].image is required',
    ]);
    assert.deepEqual(rules([pod({ containers: [] })]), ['invalid-field Pod p']);
    assert.deepEqual(rules([pod({ serviceAccountName: 'runner', restartPolicy: 'Never', containers: [container('web', 'x')] })]), []);
  });

  it('claims of existing volumes or of data elsewhere, wherever a claim spec appears', () => {
    const claim = (extra: object) => ({ accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } }, ...extra });
    const podSpec = (volumes: object[]) => ({
      securityContext: { runAsNonRoot: true, seccompProfile: { type: 'RuntimeDefault' } },
      volumes,
      containers: [{ name: 'c', image: 'x', securityContext: { allowPrivilegeEscalation: false, capabilities: { drop: ['ALL'] } } }],
    });
    const ephemeral = (extra: object) => ({ name: 'v', ephemeral: { volumeClaimTemplate: { spec: claim(extra) } } });
    const objects: Manifest[] = [
      {
        apiVersion: 'apps/v1',
        kind: 'StatefulSet',
        metadata: { name: 's' },
        spec: {
          serviceName: 's',
          selector: { matchLabels: { a: 'b' } },
          template: { metadata: { labels: { a: 'b' } }, spec: podSpec([]) },
          volumeClaimTemplates: [{ metadata: { name: 'd' }, spec: claim({ volumeName: 'someone-elses-pv' }) }],
        },
      },
      {
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: { name: 'p' },
        spec: podSpec([
          ephemeral({
            volumeName: 'someone-elses-pv',
            dataSourceRef: { kind: 'PersistentVolumeClaim', name: 'db', namespace: 'prod' },
          }),
        ]),
      },
      {
        apiVersion: 'v1',
        kind: 'PersistentVolumeClaim',
        metadata: { name: 'c' },
        spec: claim({ storageClassName: '', selector: { matchLabels: { team: 'payments' } } }),
      },
      {
        apiVersion: 'batch/v1',
        kind: 'CronJob',
        metadata: { name: 'j' },
        spec: {
          schedule: '@daily',
          jobTemplate: {
            spec: {
              template: {
                spec: { ...podSpec([ephemeral({ storageClassName: '' })]), restartPolicy: 'Never' },
              },
            },
          },
        },
      },
    ];
    assert.deepEqual(rules(objects), [
      'volume-binding StatefulSet.apps s',
      'volume-binding Pod p',
      'other-namespace Pod p',
      'volume-binding PersistentVolumeClaim c',
      'volume-binding PersistentVolumeClaim c',
      'volume-binding CronJob.batch j',
    ]);
    assert.match(
      formatPolicyViolations(check(objects).violations),
      /StatefulSet\.apps s: spec\.volumeClaimTemplates\[0\]\.spec\.volumeName binds/,
    );
    const provisioned: Manifest = {
      apiVersion: 'v1',
      kind: 'PersistentVolumeClaim',
      metadata: { name: 'ok' },
      spec: claim({ storageClassName: 'fast' }),
    };
    const fast = { storageClasses: ['fast'] };
    assert.deepEqual(rules([provisioned, { ...objects[1]!, spec: podSpec([ephemeral({})]) }], fast), []);
    // A class the operator does not allow: one of volumes made by hand (the docs' `manual`) binds any of them.
    const manual: Manifest = { ...provisioned, metadata: { name: 'grab' }, spec: claim({ storageClassName: 'manual' }) };
    assert.deepEqual(rules([provisioned, manual], fast), ['volume-binding PersistentVolumeClaim grab']);
    assert.match(
      formatPolicyViolations(check([manual], fast).violations),
      /storageClassName "manual" is not one the operator allows .*; leave it unset \(the cluster's default class\) or name fast/,
    );
    assert.deepEqual(rules([provisioned]), ['volume-binding PersistentVolumeClaim ok'], 'none allowed by default');
    assert.deepEqual(rules([{ ...provisioned, spec: claim({}) }]), [], "unset: the cluster's default class");
    // The beta storage-class annotation still wins over spec.storageClassName: with "" it bound an admin's
    // class-less PersistentVolume (a hostPath of production data). The binder's own annotations alike.
    const annotated = (annotations: Record<string, string>) => ({ metadata: { name: 'd', annotations }, spec: claim({}) });
    const byAnnotation: Manifest[] = [
      { apiVersion: 'v1', kind: 'PersistentVolumeClaim', ...annotated({ 'volume.beta.kubernetes.io/storage-class': '' }) },
      {
        ...objects[0]!,
        spec: { ...(objects[0]!.spec as object), volumeClaimTemplates: [annotated({ 'volume.kubernetes.io/selected-node': 'n1' })] },
      },
      {
        ...objects[1]!,
        spec: podSpec([
          { name: 'v', ephemeral: { volumeClaimTemplate: annotated({ 'volume.beta.kubernetes.io/storage-class': 'fast' }) } },
        ]),
      },
    ];
    assert.deepEqual(rules(byAnnotation), [
      'volume-binding PersistentVolumeClaim d',
      'volume-binding StatefulSet.apps s',
      'volume-binding Pod p',
    ]);
    assert.match(
      formatPolicyViolations(check(byAnnotation).violations),
      /PersistentVolumeClaim d: metadata\.annotations\["volume\.beta\.kubernetes\.io\/storage-class"\] chooses the claim's volume/,
    );
  });

  it('pods placed past the scheduler, with a priority class or tolerations the operator does not allow', () => {
    const pod = (spec: object, resources: object = {}): Manifest => ({
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'q' },
      spec: {
        securityContext: { runAsNonRoot: true, seccompProfile: { type: 'RuntimeDefault' } },
        containers: [
          { name: 'c', image: 'x', resources, securityContext: { allowPrivilegeEscalation: false, capabilities: { drop: ['ALL'] } } },
        ],
        ...spec,
      },
    });
    const reach = pod({
      nodeName: 'control-plane-1',
      priorityClassName: 'production-critical',
      tolerations: [{ operator: 'Exists' }, { key: 'dedicated', operator: 'Equal', value: 'payments', effect: 'NoSchedule' }],
    });
    assert.deepEqual(rules([reach]), Array(4).fill('scheduling Pod q'));
    // A RuntimeClass merges its own tolerations and node selector into the pod.
    assert.deepEqual(rules([pod({ runtimeClassName: 'gpu-nodes' })]), ['scheduling Pod q']);
    assert.match(check([pod({ runtimeClassName: 'gpu-nodes' })]).violations[0]!.message, /runtimeClassName is "gpu-nodes"/);
    assert.deepEqual(rules([pod({ runtimeClassName: 'gvisor' })], { runtimeClasses: ['gvisor'] }), []);
    // A PodTemplate (where an operator allows the kind) is a pod spec like any other.
    const podTemplate: Manifest = {
      apiVersion: 'v1',
      kind: 'PodTemplate',
      metadata: { name: 't' },
      template: { spec: { ...(pod({}).spec as object), nodeName: 'n1' } },
    };
    assert.deepEqual(rules([podTemplate], { allowedKinds: new AllowedKinds(['PodTemplate']) }), ['scheduling PodTemplate t']);
    assert.deepEqual(
      check([reach], { priorityClasses: ['production-critical'], tolerationKeys: ['dedicated'] }).violations.map((v) => v.message),
      [
        'spec.nodeName puts the pod on node "control-plane-1" past the scheduler; leave it unset',
        'spec.tolerations[0] tolerates every taint, which lets the pod onto nodes kept for others; tolerations may name dedicated',
      ],
    );
    // What the API server adds itself: the node conditions (NoExecute) and the extended resources the pod requests,
    // where the namespace's quota bounds them.
    const gpuQuota = { quotaExtendedResources: ['nvidia.com/gpu'] };
    const usual = pod(
      {
        tolerations: [
          { key: 'node.kubernetes.io/not-ready', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 300 },
          { key: 'nvidia.com/gpu', operator: 'Exists', effect: 'NoSchedule' },
        ],
      },
      { limits: { 'nvidia.com/gpu': '1' } },
    );
    assert.deepEqual(rules([usual], gpuQuota), []);
    assert.deepEqual(rules([usual]), ['scheduling Pod q'], 'a GPU no quota bounds: its tainted nodes are not for previews');
    const withoutGpu = { ...usual, spec: { ...(usual.spec as object), containers: (pod({}).spec as { containers: unknown }).containers } };
    assert.deepEqual(rules([withoutGpu], gpuQuota), ['scheduling Pod q'], 'a GPU toleration of a pod that requests no GPU');
    // A "resource" the scheduler fits anywhere (zero), or one the API server takes for native (`kubernetes.io/` in its
    // name, checked no further): naming the taint it tolerates put a pod on the control plane, or on a cordoned node.
    const tolerating = (key: string, limits: Record<string, string>) =>
      pod({ tolerations: [{ key, operator: 'Exists', effect: 'NoSchedule' }] }, { limits: { cpu: '1', ...limits } });
    const attempts = [
      tolerating('node-role.kubernetes.io/control-plane', { 'node-role.kubernetes.io/control-plane': '0' }),
      tolerating('node-role.kubernetes.io/control-plane', { 'node-role.kubernetes.io/control-plane': '1' }),
      tolerating('node.kubernetes.io/unschedulable', { 'node.kubernetes.io/unschedulable': '1' }),
      tolerating('dedicated.example.com/prod', { 'dedicated.example.com/prod': '0' }),
      tolerating('nvidia.com/gpu', { 'nvidia.com/gpu': '0m' }),
    ];
    assert.deepEqual(
      attempts.map((attempt) => rules([attempt], gpuQuota)),
      Array(5).fill(['scheduling Pod q']),
    );
    assert.deepEqual(rules([tolerating('nvidia.com/gpu', { 'nvidia.com/gpu': '2' })], gpuQuota), []);
  });

  it("GPUs the namespace's quota does not bound, where it bounds others: past the ceiling the operator set", () => {
    const gpuQuota = { quotaExtendedResources: ['nvidia.com/gpu'] };
    const podAsking = (limits: Record<string, string>, tolerations: object[] = []): Manifest => ({
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'q' },
      spec: {
        securityContext: { runAsNonRoot: true, seccompProfile: { type: 'RuntimeDefault' } },
        tolerations,
        containers: [
          {
            name: 'c',
            image: 'x',
            resources: { limits },
            securityContext: { allowPrivilegeEscalation: false, capabilities: { drop: ['ALL'] } },
          },
        ],
      },
    });
    const algorithm = (resources: object): Manifest => ({
      apiVersion: 'ai.alien6.io/v1',
      kind: 'Algorithm',
      metadata: { name: 'a' },
      spec: { image: 'registry.example.com/a:1', resources },
    });
    const amd = [{ key: 'amd.com/gpu', operator: 'Exists', effect: 'NoSchedule' }];
    assert.deepEqual(rules([podAsking({ 'amd.com/gpu': '8' })], gpuQuota), ['unbounded-resource Pod q']);
    assert.deepEqual(rules([podAsking({ 'amd.com/gpu': '8' }, amd)], gpuQuota), ['scheduling Pod q', 'unbounded-resource Pod q']);
    assert.deepEqual(rules([algorithm({ gpu: 'amd.com/gpu', gpuCount: 4 })], gpuQuota), ['unbounded-resource Algorithm.ai.alien6.io a']);
    assert.match(
      formatPolicyViolations(check([algorithm({ gpu: 'amd.com/gpu', gpuCount: 4 })], gpuQuota).violations),
      /asks for 4 amd\.com\/gpu per pod, but the namespace's quota does not bound it \(it bounds nvidia\.com\/gpu\)/,
    );
    // What the quota bounds passes. Where it bounds no GPU at all nothing is bounded (documented), but no toleration
    // lets a pod onto GPU nodes tainted for others; an Algorithm, whose controller writes the toleration with its own
    // identity, gets no GPU then at all (8 replicas of 16 AMD GPUs took a tenant's tainted nodes whole).
    const nvidia = [{ key: 'nvidia.com/gpu', operator: 'Exists', effect: 'NoSchedule' }];
    assert.deepEqual(rules([podAsking({ 'nvidia.com/gpu': '1' }, nvidia), algorithm({ gpuCount: 2 })], gpuQuota), []);
    const none = { quotaExtendedResources: [] };
    assert.deepEqual(rules([podAsking({ 'amd.com/gpu': '8' }), algorithm({ gpuCount: 0 })], none), []);
    assert.deepEqual(rules([podAsking({ 'amd.com/gpu': '8' }, amd)], none), ['scheduling Pod q']);
    for (const resources of [{ gpu: 'amd.com/gpu', gpuCount: 16 }, { gpuCount: 1 }]) {
      assert.deepEqual(rules([algorithm(resources)], none), ['unbounded-resource Algorithm.ai.alien6.io a'], JSON.stringify(resources));
    }
    assert.match(formatPolicyViolations(check([algorithm({ gpuCount: 1 })], none).violations), /quota bounds no GPU; set a GPU total/);
  });

  it('inline CSI volumes of drivers the operator does not allow (another identity acts on them), and grace periods past teardown', () => {
    const securePod = { runAsNonRoot: true, seccompProfile: { type: 'RuntimeDefault' } };
    const container = { name: 'c', image: 'x', securityContext: { allowPrivilegeEscalation: false, capabilities: { drop: ['ALL'] } } };
    const deployment = (podSpec: object): Manifest => ({
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: 'web' },
      spec: {
        selector: { matchLabels: { app: 'web' } },
        template: { metadata: { labels: { app: 'web' } }, spec: { securityContext: securePod, containers: [container], ...podSpec } },
      },
    });
    // cert-manager's csi-driver would issue this with its own identity, past the Certificate rules.
    const certificate = {
      name: 'tls',
      csi: {
        driver: 'csi.cert-manager.io',
        readOnly: true,
        volumeAttributes: {
          'csi.cert-manager.io/issuer-kind': 'ClusterIssuer',
          'csi.cert-manager.io/dns-names': 'api.production.example.com',
        },
      },
    };
    const share = { name: 'share', csi: { driver: 'nfs.csi.k8s.io', volumeAttributes: { server: '10.0.0.5', share: '/exports/team-b' } } };
    assert.deepEqual(
      check([deployment({ volumes: [certificate, share] })]).violations.map((v) => `${v.rule} ${v.message.split(' is ')[0]}`),
      ['inline-volume spec.template.spec.volumes[0]', 'inline-volume spec.template.spec.volumes[1]'],
    );
    assert.deepEqual(rules([deployment({ volumes: [share] })], { csiDrivers: ['nfs.csi.k8s.io'] }), [], 'a driver the operator allows');
    assert.deepEqual(rules([deployment({ volumes: [{ name: 'scratch', emptyDir: {} }] })]), []);

    for (const grace of [301, 315_360_000, '30']) {
      assert.deepEqual(
        rules([deployment({ terminationGracePeriodSeconds: grace })]),
        ['termination-grace Deployment.apps web'],
        String(grace),
      );
    }
    for (const grace of [0, 30, 300]) assert.deepEqual(rules([deployment({ terminationGracePeriodSeconds: grace })]), []);
  });

  it('annotations that make another controller act across namespaces or outside the cluster, on any object', () => {
    const objects: Manifest[] = [
      service('svc', { clusterIP: 'None', selector: { a: 'b' }, ports: [{ port: 80 }] }),
      {
        apiVersion: 'v1',
        kind: 'Secret',
        metadata: { name: 'copy', annotations: { 'replicator.v1.mittwald.de/replicate-from': 'kube-system/cloud-credentials' } },
      },
      {
        apiVersion: 'v1',
        kind: 'ServiceAccount',
        metadata: { name: 'cloud', annotations: { 'eks.amazonaws.com/role-arn': 'arn:aws:iam::1:role/prod' } },
        automountServiceAccountToken: false,
      },
      {
        apiVersion: 'apps/v1',
        kind: 'Deployment',
        metadata: { name: 'd' },
        spec: {
          selector: { matchLabels: { a: 'b' } },
          template: {
            metadata: {
              labels: { a: 'b' },
              annotations: { 'vault.hashicorp.com/agent-inject': 'true', 'vault.hashicorp.com/role': 'prod' },
            },
            spec: {
              securityContext: { runAsNonRoot: true, seccompProfile: { type: 'RuntimeDefault' } },
              containers: [
                { name: 'c', image: 'x', securityContext: { allowPrivilegeEscalation: false, capabilities: { drop: ['ALL'] } } },
              ],
            },
          },
        },
      },
    ];
    objects[0]!.metadata.annotations = { 'external-dns.alpha.kubernetes.io/hostname': 'login.example.com' };
    assert.deepEqual(rules(objects), [
      'controller-annotation Service svc',
      'controller-annotation Secret copy',
      'controller-annotation ServiceAccount cloud',
      'controller-annotation Deployment.apps d',
      'controller-annotation Deployment.apps d',
    ]);
    assert.match(
      formatPolicyViolations(check(objects).violations),
      /spec\.template\.metadata\.annotations\[vault\.hashicorp\.com\/role\] is refused/,
    );
    // On an Ingress, never allowed, whatever the allow-list says (and refused as a setting).
    const dns = ingress({ 'external-dns.alpha.kubernetes.io/hostname': 'login.example.com' });
    assert.deepEqual(rules([dns], { ingressAnnotations: ['external-dns.alpha.kubernetes.io/hostname'] }), [
      'ingress-annotation Ingress.networking.k8s.io web',
    ]);
    assert.match(
      ingressAnnotationSettingProblem('external-dns.alpha.kubernetes.io/hostname')!,
      /can never be allowed: external-dns would publish/,
    );
  });

  it("annotations cert-manager copies onto the Secret it writes: a Certificate's secretTemplate", () => {
    const replicated = certificate({
      secretTemplate: {
        annotations: {
          'replicator.v1.mittwald.de/replicate-to': '.*',
          'reflector.v1.k8s.emberstack.com/reflection-allowed': 'true',
          'reflector.v1.k8s.emberstack.com/reflection-auto-enabled': 'true',
        },
      },
    });
    assert.deepEqual(rules([replicated]), Array(3).fill('controller-annotation Certificate.cert-manager.io tls'));
    assert.match(
      formatPolicyViolations(check([replicated]).violations),
      /spec\.secretTemplate\.annotations\[replicator\.v1\.mittwald\.de\/replicate-to\] is refused: kubernetes-replicator copies/,
    );
    assert.deepEqual(rules([certificate({ secretTemplate: { annotations: { 'example.com/owner': 'web' }, labels: { app: 'web' } } })]), []);
  });

  it('finalizers, which no controller would remove: the namespace would stay Terminating, holding its slot', () => {
    const held: Manifest = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'held', finalizers: ['example.com/never'] } };
    assert.deepEqual(rules([held]), ['finalizers ConfigMap held']);
    assert.match(formatPolicyViolations(check([held]).violations), /^ConfigMap held: metadata\.finalizers must not be set/);
    assert.deepEqual(rules([{ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'free' } }]), []);
    // A template's finalizers reach what a controller makes from it: the pods, the claims.
    const template = { metadata: { finalizers: ['example.com/never'] }, spec: { containers: [] } };
    const deployment: Manifest = { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'd' }, spec: { template } };
    const cronJob: Manifest = {
      apiVersion: 'batch/v1',
      kind: 'CronJob',
      metadata: { name: 'c' },
      spec: { jobTemplate: { metadata: { finalizers: ['x/y'] }, spec: { template } } },
    };
    const claims: Manifest = {
      apiVersion: 'apps/v1',
      kind: 'StatefulSet',
      metadata: { name: 's' },
      spec: { volumeClaimTemplates: [{ metadata: { name: 'data', finalizers: ['x/y'] } }] },
    };
    const paths = check([deployment, cronJob, claims])
      .violations.filter((v) => v.rule === 'finalizers')
      .map((v) => v.message.split(' ')[0]);
    assert.deepEqual(paths, [
      'spec.template.metadata.finalizers',
      'spec.jobTemplate.metadata.finalizers',
      'spec.jobTemplate.spec.template.metadata.finalizers',
      'spec.volumeClaimTemplates[0].metadata.finalizers',
    ]);
  });

  it('disruption budgets: off by default; where allowed, one that could refuse every eviction (node drains held up)', () => {
    const budget = (spec: object): Manifest => ({
      apiVersion: 'policy/v1',
      kind: 'PodDisruptionBudget',
      metadata: { name: 'web' },
      spec: { unhealthyPodEvictionPolicy: 'AlwaysAllow', ...spec },
    });
    const selector = { matchLabels: { app: 'web' } };
    assert.deepEqual(rules([budget({ maxUnavailable: 1, selector })]), ['kind-not-allowed PodDisruptionBudget.policy web']);
    const allowed = { allowedKinds: new AllowedKinds(['ConfigMap', 'PodDisruptionBudget.policy']) };
    for (const spec of [{ maxUnavailable: 0 }, { maxUnavailable: '0%' }, { minAvailable: 1 }, { minAvailable: '100%' }, {}]) {
      assert.deepEqual(
        rules([budget({ ...spec, selector })], allowed),
        ['disruption-budget PodDisruptionBudget.policy web'],
        JSON.stringify(spec),
      );
    }
    assert.match(formatPolicyViolations(check([budget({ maxUnavailable: 0, selector })], allowed).violations), /holds up node drains/);
    for (const maxUnavailable of [1, 3, '1%', '50%']) assert.deepEqual(rules([budget({ maxUnavailable, selector })], allowed), []);
    // Unready pods protected (the default IfHealthyBudget): an image kept unready refuses every eviction.
    for (const unhealthyPodEvictionPolicy of [undefined, 'IfHealthyBudget']) {
      assert.deepEqual(rules([budget({ maxUnavailable: 1, selector, unhealthyPodEvictionPolicy })], allowed), [
        'disruption-budget PodDisruptionBudget.policy web',
      ]);
    }
    // The Algorithm controller's budget selects its pods by its label: a Job's pods under that label (the disruption
    // controller finds no scale for them and allows nothing) turned it against every drain, with no budget rendered.
    const job: Manifest = {
      apiVersion: 'batch/v1',
      kind: 'Job',
      metadata: { name: 'hold' },
      spec: {
        template: {
          metadata: { labels: { 'ai.alien6.io/algorithm': 'api', app: 'hold' } },
          spec: {
            restartPolicy: 'Never',
            securityContext: { runAsNonRoot: true, seccompProfile: { type: 'RuntimeDefault' } },
            containers: [{ name: 'c', image: 'x', securityContext: { allowPrivilegeEscalation: false, capabilities: { drop: ['ALL'] } } }],
          },
        },
      },
    };
    assert.deepEqual(rules([job]), ['disruption-budget Job.batch hold']);
    assert.match(
      formatPolicyViolations(check([job]).violations),
      /spec\.template\.metadata\.labels\["ai\.alien6\.io\/algorithm"\] is the Algorithm controller's/,
    );
    const own = { ...job, spec: { template: { ...(job.spec as { template: object }).template, metadata: { labels: { app: 'hold' } } } } };
    assert.deepEqual(rules([own]), []);
  });

  it('Roles with wildcards, privileged verbs, RBAC or token requests', () => {
    assert.deepEqual(
      rules([
        role([
          { apiGroups: ['*'], resources: ['pods'], verbs: ['get'] },
          { apiGroups: ['rbac.authorization.k8s.io'], resources: ['roles'], verbs: ['bind', 'escalate'] },
          { apiGroups: [''], resources: ['serviceaccounts/token'], verbs: ['create'] },
          { apiGroups: ['rbac.authorization.k8s.io'], resources: ['rolebindings'], verbs: ['create'] },
          { apiGroups: [''], resources: ['users'], verbs: ['impersonate'] },
        ]),
      ]).map((r) => r.split(' ')[0]),
      [
        'rbac-wildcard',
        'rbac-privileged-verb',
        'rbac-privileged-verb',
        'rbac-guard-resource',
        'rbac-guard-resource',
        'rbac-guard-resource',
        'rbac-privileged-verb',
      ],
    );
  });

  it('Roles that let pods write at run time what a rendering may not (Services, Ingresses, Secrets, Certificates, ...)', () => {
    assert.deepEqual(
      rules([
        role([
          { apiGroups: [''], resources: ['services', 'services/status'], verbs: ['create', 'patch'] },
          { apiGroups: ['networking.k8s.io'], resources: ['ingresses'], verbs: ['create'] },
          { apiGroups: ['cert-manager.io'], resources: ['certificates'], verbs: ['update'] },
        ]),
      ]).map((r) => r.split(' ')[0]),
      Array(4).fill('rbac-checked-write'),
    );
  });

  it('Roles that let pods create workloads, or kinds outside the allow-list, at run time (a pod with nodeName, an HTTPRoute, ...)', () => {
    const writes = role([
      { apiGroups: [''], resources: ['pods', 'podtemplates', 'replicationcontrollers'], verbs: ['create', 'update', 'patch'] },
      { apiGroups: ['apps'], resources: ['deployments', 'statefulsets', 'daemonsets', 'replicasets'], verbs: ['patch'] },
      { apiGroups: ['batch'], resources: ['jobs', 'cronjobs'], verbs: ['create', 'delete'] },
      {
        apiGroups: ['gateway.networking.k8s.io'],
        resources: ['httproutes', 'grpcroutes', 'tlsroutes', 'referencegrants'],
        verbs: ['create'],
      },
      { apiGroups: ['resource.k8s.io'], resources: ['resourceclaims'], verbs: ['create'] },
      { apiGroups: [''], resources: ['configmaps'], verbs: ['deletecollection'] },
      // Leases and Events are writable in their own groups only: another group's `leases` is another kind.
      { apiGroups: ['example.com'], resources: ['leases'], verbs: ['create'] },
      // No group at all grants nothing, and is refused rather than trusted.
      { apiGroups: [], resources: ['pods'], verbs: ['create'] },
    ]);
    assert.deepEqual(rules([writes]), Array(17).fill('rbac-checked-write Role.rbac.authorization.k8s.io r'));
    assert.match(formatPolicyViolations(check([writes]).violations), /rules\[0\] grants create, update, patch on pods; a Role may write/);
  });

  it("(but a Role granting reads of anything but the guards, and writes of Events and Leases, to the namespace's own ServiceAccount passes)", () => {
    assert.deepEqual(
      rules([
        role([
          { apiGroups: [''], resources: ['configmaps', 'pods', 'pods/log', 'services', 'secrets'], verbs: ['get', 'list', 'watch'] },
          { apiGroups: ['apps', 'batch'], resources: ['deployments', 'statefulsets', 'jobs', 'cronjobs'], verbs: ['get', 'list', 'watch'] },
          { apiGroups: ['gateway.networking.k8s.io'], resources: ['httproutes'], verbs: ['get'] },
          { apiGroups: ['coordination.k8s.io'], resources: ['leases'], verbs: ['get', 'create', 'update'] },
          { apiGroups: ['', 'events.k8s.io'], resources: ['events'], verbs: ['create', 'patch'] },
        ]),
      ]),
      [],
    );
  });

  it('a rendering of 20,000 ConfigMaps, with one violation', () => {
    const flood = Array.from({ length: 20_000 }, (_, i): Manifest => ({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: `flood-${i}` },
      data: {},
    }));
    const result = check(flood);
    assert.deepEqual(result.violations, [
      { object: 'the rendering', rule: 'too-many-objects', message: 'the rendering has 20000 objects; at most 500 are allowed' },
    ]);
    assert.deepEqual(result.objects, []);
    const limits = { maxObjects: 1000, maxBytes: 1 << 22, maxObjectBytes: 1 << 19, maxDepth: 64 };
    assert.equal(check(flood.slice(0, 600), { limits }).violations.length, 0);
  });

  it('a 20,000-level nested object, before anything clones it', () => {
    let deep: Record<string, unknown> = {};
    for (let i = 0; i < 20_000; i++) deep = { a: deep };
    const result = check([{ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'deep' }, data: deep }]);
    assert.deepEqual(
      result.violations.map((v) => v.rule),
      ['too-deep'],
    );
    assert.match(
      formatPolicyViolations(result.violations),
      /^the rendering: the rendering is nested deeper than 64 levels in object 0 \(ConfigMap deep\) \[too-deep\]$/,
    );
  });

  it('a rendering too large in bytes', () => {
    const big: Manifest = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'big' }, data: { blob: 'x'.repeat(600 * 1024) } };
    assert.deepEqual(rules([big]), ['too-large the rendering']);
  });
});
