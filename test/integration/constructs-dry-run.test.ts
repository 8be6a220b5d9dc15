// Everything the construct library renders is accepted by the real API server (server-side
// apply, dryRun=All) in a namespace enforcing Pod Security `restricted`: the example preview,
// and the workloads of the seed Algorithm (stable, canary, CPU fallback) and seed Database
// (PostgreSQL and MySQL). Pod Security only warns about workload objects, so every pod template
// is also submitted as a Pod, which it enforces.
import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import { controllerReference, renderAlgorithmWorkloads, renderDatabaseWorkloads, type Manifest } from '../../constructs/index.js';
import { exampleIdentity, renderExamplePreview } from '../../examples/example-preview.js';
import { installCrds } from '../fixtures/crds/install-crds.js';
import { KubeRequestError, kubeRequest, serverSideApply } from '../fixtures/crds/kube-apply.js';
import { seedExamples } from '../fixtures/crds/seed-examples.js';
import { createNamespace, testCluster, uniqueName } from '../support/test-cluster.js';

const cluster = await testCluster();
const kc = cluster.kubeConfig;
let namespace: string;

before(async () => {
  await installCrds(kc);
  namespace = uniqueName('dry-run');
  await createNamespace(kc, namespace, {
    'pod-security.kubernetes.io/enforce': 'restricted',
    'pod-security.kubernetes.io/enforce-version': 'latest',
  });
});

/** Dry-runs every object; collects every rejection instead of stopping at the first. */
async function dryRunAll(objects: readonly Manifest[]): Promise<string[]> {
  const rejected: string[] = [];
  for (const object of objects) {
    try {
      await serverSideApply(kc, object, { fieldManager: 'constructs-dry-run-test', dryRun: true });
    } catch (err) {
      rejected.push(`${object.kind}/${object.metadata.name}: ${(err as Error).message}`);
    }
    for (const pod of podsOf(object)) {
      try {
        await kubeRequest(kc, 'POST', `/api/v1/namespaces/${namespace}/pods?dryRun=All&fieldValidation=Strict`, pod);
      } catch (err) {
        rejected.push(`pod of ${object.kind}/${object.metadata.name}: ${(err as Error).message}`);
      }
    }
  }
  return rejected;
}

/** The pod a workload object would create first, as a Pod manifest. */
function podsOf(object: Manifest): Manifest[] {
  if (object.kind !== 'Deployment' && object.kind !== 'StatefulSet') return [];
  const spec = object.spec as {
    template: { metadata?: Record<string, unknown>; spec: { volumes?: unknown[] } };
    volumeClaimTemplates?: { metadata: { name: string } }[];
  };
  // The StatefulSet controller mounts each claim template as the claim of pod 0.
  const claims = (spec.volumeClaimTemplates ?? []).map((claim) => ({
    name: claim.metadata.name,
    persistentVolumeClaim: { claimName: `${claim.metadata.name}-${object.metadata.name}-0` },
  }));
  return [
    {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { ...spec.template.metadata, name: `${object.metadata.name}-0`, namespace },
      spec: { ...spec.template.spec, volumes: [...(spec.template.spec.volumes ?? []), ...claims] },
    },
  ];
}

const owner = (kind: string, name: string) =>
  controllerReference({ apiVersion: 'ai.alien6.io/v1', kind, metadata: { name, uid: '8d0f3a5e-3f3a-4f6e-9a2b-0c1d2e3f4a5b' } });

describe('server-side dry run in a namespace enforcing restricted', () => {
  it('the Pod Security gate is real: a root pod is rejected', async () => {
    const rootPod = {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'root', namespace },
      spec: { containers: [{ name: 'c', image: 'busybox', securityContext: { runAsUser: 0 } }] },
    };
    const error = await kubeRequest(kc, 'POST', `/api/v1/namespaces/${namespace}/pods?dryRun=All`, rootPod).then(
      () => assert.fail('a root pod was admitted'),
      (err: unknown) => err,
    );
    assert.ok(error instanceof KubeRequestError);
    assert.match(error.message, /violates PodSecurity "restricted:latest"/);
  });

  it('accepts every object of the example preview', async () => {
    const objects = renderExamplePreview(exampleIdentity(namespace));
    assert.ok(objects.length >= 14);
    assert.deepEqual(await dryRunAll(objects), []);
  });

  it("accepts the seed Algorithm's workloads: stable, with a canary, and with the CPU fallback", async () => {
    const { algorithm } = seedExamples();
    const input = { metadata: { name: algorithm.metadata.name, namespace }, spec: algorithm.spec };
    const ownerReferences = [owner('Algorithm', algorithm.metadata.name)];
    const variants = [
      renderAlgorithmWorkloads(input, { ownerReferences }),
      renderAlgorithmWorkloads(input, {
        ownerReferences,
        stableImage: 'registry.alien6.io/algo/reco:2.1.3',
        stableReplicas: null,
        canary: { image: algorithm.spec.image, replicas: 1 },
      }),
      renderAlgorithmWorkloads(input, { ownerReferences, latencyMetric: null, readinessPath: '/healthz' }),
    ];
    for (const objects of variants) assert.deepEqual(await dryRunAll(objects), []);
  });

  it("accepts the seed Database's workloads, for PostgreSQL and for MySQL", async () => {
    const { database } = seedExamples();
    const ownerReferences = [owner('Database', database.metadata.name)];
    const postgres = renderDatabaseWorkloads(
      { metadata: { name: database.metadata.name, namespace }, spec: database.spec },
      { ownerReferences },
    );
    const mysql = renderDatabaseWorkloads(
      { metadata: { name: 'mysql-db', namespace }, spec: { engine: 'mysql', version: '8.4', storage: '10Gi', replicas: 1 } },
      { ownerReferences, storageClassName: 'standard' },
    );
    assert.deepEqual(await dryRunAll(postgres), []);
    assert.deepEqual(await dryRunAll(mysql), []);
  });
});
