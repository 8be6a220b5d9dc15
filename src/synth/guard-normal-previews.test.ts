// Deny by default must not deny what previews are for: the example repository's rendering
// (preview.yaml plus main.ts), the seed Algorithm and Database, the workloads the construct
// library renders for them, and the usual extras a main.ts adds pass with the default settings.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { App, Chart } from 'cdk8s';
import { parseAllDocuments } from 'yaml';
import { exampleChart, exampleIdentity } from '../../examples/example-preview.js';
import {
  kplus,
  renderAlgorithmWorkloads,
  renderDatabaseWorkloads,
  type AlgorithmSpec,
  type DatabaseSpec,
  type Manifest,
} from '../../constructs/index.js';
import { AllowedKinds, defaultAllowedKinds } from './guard-allowed-kinds.js';
import { checkRenderedObjects, formatPolicyViolations, type RenderPolicy } from './guard-rendered-objects.js';
import { splitRendering, type InProcessRendering } from './render-preview.js';

const identity = exampleIdentity();
const policy: RenderPolicy = {
  namespace: identity.namespace,
  host: identity.host,
  allowedKinds: new AllowedKinds(),
  podSecurity: 'restricted',
  ingressClassName: 'nginx',
  certificateIssuer: { name: 'preview-issuer', kind: 'ClusterIssuer' },
  // The example's quota bounds the GPUs its preview.yaml names, as the controller reads them from its own rendering.
  quotaExtendedResources: ['nvidia.com/gpu'],
};

function assertPasses(objects: readonly Manifest[], allowedKinds = policy.allowedKinds): Manifest[] {
  const result = checkRenderedObjects(objects, { ...policy, allowedKinds });
  assert.equal(formatPolicyViolations(result.violations), '');
  assert.equal(result.objects.length, objects.length);
  return result.objects;
}

/** The example, split as the controller splits every rendering (the namespace and its guards are the operator's). */
function exampleObjects(tls: boolean): Manifest[] {
  const chart = exampleChart(new App(), identity, tls ? {} : { tls: false });
  const ns = chart.previewNamespace;
  const operator: InProcessRendering = {
    manifests: chart.toJson(),
    guards: new Set([ns.namespace, ...ns.guards].map((o) => `${o.kind}/${o.name}`)),
    url: chart.url,
  };
  return splitRendering(operator, operator.manifests, identity.namespace).objects;
}

const seeds = parseAllDocuments(readFileSync(new URL('../../test/fixtures/crds/seed-examples.yaml', import.meta.url), 'utf8')).map(
  (d) => d.toJSON() as Manifest,
);
const seed = (kind: string) => seeds.find((s) => s.kind === kind)!;

describe('what a normal preview renders passes the policy with the default settings', () => {
  it('the example repository (preview.yaml and main.ts), with and without TLS', () => {
    const objects = assertPasses(exampleObjects(true));
    assert.deepEqual(objects.map((o) => o.kind).sort(), [
      'Algorithm',
      'Algorithm',
      'Algorithm',
      'Certificate',
      'ConfigMap',
      'ConfigMap',
      'ConfigMap',
      'ConfigMap',
      'Database',
      'Ingress',
    ]);
    assertPasses(exampleObjects(false));
  });

  it('the seed Algorithm recommendation-engine-v2 and Database myapp-db, verbatim', () => {
    assert.deepEqual(
      seeds.map((s) => s.metadata.name),
      ['recommendation-engine-v2', 'myapp-db'],
    );
    assertPasses(seeds);
  });

  it('the workloads the construct library renders for the seeds, a canary included (its budget where budgets are allowed)', () => {
    const algorithm = seed('Algorithm');
    const database = seed('Database');
    // PodDisruptionBudgets are off the default allow-list; the library's lets a pod go, so it passes where allowed.
    const withBudgets = new AllowedKinds([...defaultAllowedKinds, 'PodDisruptionBudget.policy']);
    const objects = [
      ...renderAlgorithmWorkloads(
        { metadata: { name: algorithm.metadata.name }, spec: algorithm.spec as unknown as AlgorithmSpec },
        {
          canary: { image: 'registry.alien6.io/algo/reco:2.2.0', replicas: 1 },
        },
      ),
      ...renderDatabaseWorkloads({ metadata: { name: database.metadata.name }, spec: database.spec as unknown as DatabaseSpec }),
    ];
    // All but the Algorithm controller's own pod labels, which only it may write (its budget selects them).
    const result = checkRenderedObjects(objects, { ...policy, allowedKinds: withBudgets });
    const reserved = /spec\.template\.metadata\.labels\["ai\.alien6\.io\/(algorithm|track)"\] is the Algorithm controller's/;
    assert.deepEqual(
      result.violations.filter((v) => !reserved.test(v.message)),
      [],
    );
    assert.deepEqual(
      [...new Set(result.violations.map((v) => v.object))],
      ['Deployment.apps recommendation-engine-v2', 'Deployment.apps recommendation-engine-v2-canary'],
    );
  });

  it('the extras a main.ts adds: its own ServiceAccount, a read-only Role bound to it, a Secret, a Service and an Ingress of the library', () => {
    const chart = new Chart(new App(), 'extras', { disableResourceNameHashes: true });
    new kplus.ServiceAccount(chart, 'worker', { metadata: { name: 'worker' } });
    new kplus.Secret(chart, 'api-key', { metadata: { name: 'api-key' }, stringData: { key: 'not-a-secret' } });
    const web = new kplus.Service(chart, 'web', { metadata: { name: 'web' }, ports: [{ port: 80, targetPort: 8080 }] });
    new kplus.Ingress(chart, 'docs', { metadata: { name: 'docs' } }).addHostRule(
      `docs.${identity.host}`,
      '/',
      kplus.IngressBackend.fromService(web),
    );
    const objects: Manifest[] = [
      ...(chart.toJson() as Manifest[]),
      {
        apiVersion: 'rbac.authorization.k8s.io/v1',
        kind: 'Role',
        metadata: { name: 'reader' },
        rules: [{ apiGroups: [''], resources: ['configmaps', 'pods'], verbs: ['get', 'list', 'watch'] }],
      },
      {
        apiVersion: 'rbac.authorization.k8s.io/v1',
        kind: 'RoleBinding',
        metadata: { name: 'worker-reader' },
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'reader' },
        subjects: [{ kind: 'ServiceAccount', name: 'worker' }],
      },
    ];
    assert.deepEqual(
      objects.map((o) => o.kind),
      ['ServiceAccount', 'Secret', 'Service', 'Ingress', 'Role', 'RoleBinding'],
    );
    const passed = assertPasses(objects);
    assert.equal(
      (passed.find((o) => o.kind === 'Ingress')!.spec as { ingressClassName: string }).ingressClassName,
      'nginx',
      "the library names no class: the operator's is set",
    );
  });
});
