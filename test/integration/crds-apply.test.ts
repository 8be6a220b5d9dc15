// The CRDs against the real API server: the seed manifests apply unchanged, invalid specs are
// rejected with a message naming the field, defaults and immutability hold, every status field
// survives the status subresource, and discovery shows the category, short names and columns.
import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import type { AlgorithmStatus, DatabaseStatus, PreviewEnvironmentResource, PreviewEnvironmentStatus } from '../../constructs/index.js';
import { installCrds } from '../fixtures/crds/install-crds.js';
import { KubeRequestError, kubeRequest, objectPath, serverSideApply, type ManifestLike } from '../fixtures/crds/kube-apply.js';
import { seedExamples } from '../fixtures/crds/seed-examples.js';
import { createNamespace, testCluster, uniqueName } from '../support/test-cluster.js';

const cluster = await testCluster();
const kc = cluster.kubeConfig;
const fieldManager = 'crds-apply-test';
let namespace: string;

before(async () => {
  await installCrds(kc);
  namespace = uniqueName('crds');
  await createNamespace(kc, namespace);
});

async function rejection(object: ManifestLike): Promise<KubeRequestError> {
  const error = await serverSideApply(kc, object, { fieldManager, namespace }).then(
    () => assert.fail(`${object.kind} ${object.metadata.name} was accepted`),
    (err: unknown) => err,
  );
  assert.ok(error instanceof KubeRequestError, String(error));
  return error;
}

/** What these tests read of an object as the API server stores it. */
type StoredObject = { spec: Record<string, unknown>; status?: unknown };

async function get(object: ManifestLike): Promise<StoredObject> {
  const located = { ...object, metadata: { ...object.metadata, namespace: object.metadata.namespace ?? namespace } };
  return (await kubeRequest(kc, 'GET', await objectPath(kc, located))) as StoredObject;
}

function renamed<T extends ManifestLike>(object: T, name: string): T {
  return { ...structuredClone(object), metadata: { ...object.metadata, name } };
}

describe('the seed manifests', () => {
  it('apply unchanged and keep exactly the spec they were written with', async () => {
    const { algorithm, database } = seedExamples();
    for (const object of [algorithm, database] as unknown as ManifestLike[]) {
      const applied = await serverSideApply(kc, object, { fieldManager, namespace });
      assert.equal(applied.metadata.namespace, namespace);
      const live = await get(object);
      assert.deepEqual(live.spec, object.spec, `${object.kind} spec changed on the way in`);
    }
  });

  it('are listed together by the `previews` category, with their short names', async () => {
    const expectations = [
      { path: '/apis/ai.alien6.io/v1', plural: 'algorithms', shortNames: ['algo', 'algos'], namespaced: true },
      { path: '/apis/mycompany.com/v1', plural: 'databases', shortNames: ['db', 'dbs'], namespaced: true },
      { path: '/apis/preview.alien6.io/v1alpha1', plural: 'previewenvironments', shortNames: ['pe', 'penv'], namespaced: false },
    ];
    for (const expected of expectations) {
      const list = (await kubeRequest(kc, 'GET', expected.path)) as {
        resources: { name: string; categories?: string[]; shortNames?: string[]; namespaced: boolean }[];
      };
      const resource = list.resources.find((r) => r.name === expected.plural);
      assert.ok(resource, `${expected.plural} is not served`);
      assert.deepEqual(resource.categories, ['previews']);
      assert.deepEqual(resource.shortNames, expected.shortNames);
      assert.equal(resource.namespaced, expected.namespaced);
      assert.ok(
        list.resources.some((r) => r.name === `${expected.plural}/status`),
        `${expected.plural} has no status subresource`,
      );
    }
  });

  it('print the columns a user wants at a glance', async () => {
    const table = (await kubeRequest(
      kc,
      'GET',
      `/apis/ai.alien6.io/v1/namespaces/${namespace}/algorithms`,
      undefined,
      undefined,
      'application/json;as=Table;v=v1;g=meta.k8s.io',
    )) as { columnDefinitions: { name: string }[]; rows: { cells: unknown[] }[] };
    assert.deepEqual(
      table.columnDefinitions.map((c) => c.name),
      ['Name', 'Image', 'Replicas', 'Ready', 'Phase', 'Canary', 'Weight', 'Age'],
    );
    const row = table.rows.find((r) => r.cells[0] === 'recommendation-engine-v2');
    assert.ok(row);
    assert.equal(row.cells[1], 'registry.alien6.io/algo/reco:2.1.4');
    assert.equal(row.cells[2], 3);

    const dbTable = (await kubeRequest(
      kc,
      'GET',
      `/apis/mycompany.com/v1/namespaces/${namespace}/databases`,
      undefined,
      undefined,
      'application/json;as=Table;v=v1;g=meta.k8s.io',
    )) as { columnDefinitions: { name: string }[]; rows: { cells: unknown[] }[] };
    assert.deepEqual(
      dbTable.columnDefinitions.map((c) => c.name),
      ['Name', 'Engine', 'Version', 'Storage', 'Replicas', 'Ready', 'Phase', 'Streaming', 'Endpoint', 'Age'],
    );
    const dbRow = dbTable.rows.find((r) => r.cells[0] === 'myapp-db');
    assert.deepEqual(dbRow?.cells.slice(1, 5), ['postgresql', '16', '100Gi', 3]);
  });
});

describe('invalid specs are rejected by the API server, naming the field', () => {
  const cases: { what: string; field: string; make: () => ManifestLike }[] = [
    {
      what: 'Database replicas: 6',
      field: 'spec.replicas',
      make: () => {
        const { database } = seedExamples();
        return { ...renamed(database as unknown as ManifestLike, 'six-replicas'), spec: { ...database.spec, replicas: 6 } };
      },
    },
    {
      what: 'Database engine: oracle',
      field: 'spec.engine',
      make: () => {
        const { database } = seedExamples();
        return { ...renamed(database as unknown as ManifestLike, 'oracle'), spec: { ...database.spec, engine: 'oracle' } };
      },
    },
    {
      what: 'Algorithm minReplicas: 5, maxReplicas: 2',
      field: 'spec.scaling.minReplicas',
      make: () => {
        const { algorithm } = seedExamples();
        return {
          ...renamed(algorithm as unknown as ManifestLike, 'min-above-max'),
          spec: { ...algorithm.spec, scaling: { ...algorithm.spec.scaling!, minReplicas: 5, maxReplicas: 2 } },
        };
      },
    },
    {
      what: 'Algorithm canaryWeight: 150',
      field: 'spec.lifecycle.canaryWeight',
      make: () => {
        const { algorithm } = seedExamples();
        return {
          ...renamed(algorithm as unknown as ManifestLike, 'heavy-canary'),
          spec: { ...algorithm.spec, lifecycle: { ...algorithm.spec.lifecycle, canaryWeight: 150 } },
        };
      },
    },
  ];
  for (const c of cases) {
    it(`${c.what} → 422 naming ${c.field}, and nothing is stored`, async () => {
      const object = c.make();
      const error = await rejection(object);
      assert.equal(error.statusCode, 422);
      assert.equal(error.status.reason, 'Invalid');
      assert.match(error.status.message ?? '', new RegExp(c.field.replace(/\./g, '\\.')), error.message);
      const stored = await get(object).then(
        () => true,
        (err: KubeRequestError) => (err.statusCode === 404 ? false : Promise.reject(err)),
      );
      assert.equal(stored, false);
    });
  }

  it('the CEL rule explains minReplicas > maxReplicas in words', async () => {
    const { algorithm } = seedExamples();
    const object = {
      ...renamed(algorithm as unknown as ManifestLike, 'min-above-max-2'),
      spec: { ...algorithm.spec, replicas: 3, scaling: { minReplicas: 5, maxReplicas: 2 } },
    };
    const error = await rejection(object);
    assert.match(error.message, /spec\.scaling\.minReplicas must be less than or equal to spec\.scaling\.maxReplicas/);
  });

  it('a Database engine cannot change, and its storage cannot shrink', async () => {
    const { database } = seedExamples();
    const original = renamed(database as unknown as ManifestLike, 'immutable-engine');
    await serverSideApply(kc, original, { fieldManager, namespace });
    const engineError = await rejection({ ...original, spec: { ...database.spec, engine: 'mysql', version: '8.4' } });
    assert.match(engineError.message, /spec\.engine is immutable \(it was postgresql\)/);
    const storageError = await rejection({ ...original, spec: { ...database.spec, storage: '50Gi' } });
    assert.match(storageError.message, /spec\.storage cannot shrink \(it was 100Gi\)/);
    // Growing is fine.
    await serverSideApply(kc, { ...original, spec: { ...database.spec, storage: '200Gi' } }, { fieldManager, namespace });
    assert.equal((await get(original)).spec.storage, '200Gi');
  });

  it('names the controllers could not turn into Services are rejected', async () => {
    const { algorithm, database } = seedExamples();
    const digit = await rejection(renamed(algorithm as unknown as ManifestLike, '2nd-engine'));
    assert.match(digit.message, /metadata\.name must start with a letter/);
    const long = await rejection(renamed(database as unknown as ManifestLike, `db-${'x'.repeat(50)}`));
    assert.match(long.message, /metadata\.name must start with a letter.*at most 52 characters/);
  });

  it('replicas outside the autoscaling bounds and a non-quantity storage are rejected', async () => {
    const { algorithm, database } = seedExamples();
    const tooMany = await rejection({
      ...renamed(algorithm as unknown as ManifestLike, 'too-many'),
      spec: { ...algorithm.spec, replicas: 11 },
    });
    assert.match(tooMany.message, /spec\.replicas must lie within spec\.scaling\.minReplicas\.\.spec\.scaling\.maxReplicas/);
    const badStorage = await rejection({
      ...renamed(database as unknown as ManifestLike, 'bad-storage'),
      spec: { ...database.spec, storage: 'lots' },
    });
    assert.match(badStorage.message, /spec\.storage must be a positive quantity/);
  });
});

describe('defaults and status', () => {
  it('an Algorithm with only an image gets the documented defaults', async () => {
    const minimal = {
      apiVersion: 'ai.alien6.io/v1',
      kind: 'Algorithm',
      metadata: { name: 'minimal' },
      spec: { image: 'registry.example/app:1' },
    };
    await serverSideApply(kc, minimal, { fieldManager, namespace });
    const live = await get(minimal);
    assert.deepEqual(live.spec, {
      image: 'registry.example/app:1',
      replicas: 1,
      lifecycle: { canaryWeight: 0, successThreshold: 0.99, rollbackOnDrift: true },
    });
  });

  it('until its controller writes, each kind reads observedGeneration 0, which kstatus reads as in progress', async () => {
    const { algorithm, database } = seedExamples();
    const environment = {
      apiVersion: 'preview.alien6.io/v1alpha1',
      kind: 'PreviewEnvironment',
      metadata: { name: uniqueName('pe-new') },
      spec: {
        repository: { owner: 'alien6', name: 'reco', cloneUrl: 'https://github.com/alien6/reco.git' },
        pullRequest: {
          number: 7,
          headSha: '5f1d2c0b9a8e7d6c5b4a39281706f5e4d3c2b1a0',
          headRef: 'feature/ranking',
          baseRef: 'main',
          author: 'octocat',
          authorAssociation: 'MEMBER',
          labels: [],
          draft: false,
          fork: false,
          updatedAt: '2024-05-01T10:00:00Z',
        },
      },
    };
    const fresh = [renamed(algorithm as unknown as ManifestLike, 'fresh-algo'), renamed(database as unknown as ManifestLike, 'fresh-db')];
    for (const object of [...fresh, environment as ManifestLike]) {
      const applied = await serverSideApply(kc, object, { fieldManager, namespace });
      const live = (await get(object)) as StoredObject & { metadata: { generation: number } };
      assert.deepEqual(applied.status, { observedGeneration: 0 }, `${object.kind}: the answer to the create`);
      assert.deepEqual(live.status, { observedGeneration: 0 }, `${object.kind}: a later read`);
      assert.ok(live.metadata.generation >= 1, `${object.kind} generation ${live.metadata.generation} is ahead of the status`);
    }
  });

  it('every Algorithm and Database status field survives the status subresource', async () => {
    const { algorithm, database } = seedExamples();
    const algorithmStatus: Required<AlgorithmStatus> = {
      phase: 'Canary',
      observedGeneration: 1,
      lastReconciled: '2026-01-02T03:04:05Z',
      retryCount: 2,
      readyReplicas: 3,
      stableImage: 'registry.alien6.io/algo/reco:2.1.3',
      canaryImage: 'registry.alien6.io/algo/reco:2.1.4',
      desiredWeight: 20,
      actualWeight: 25,
      lastAnalysis: {
        value: 0.995,
        time: '2026-01-02T03:04:00Z',
        result: 'Success',
        consecutiveSuccesses: 2,
        consecutiveFailures: 0,
        consecutiveNoData: 0,
      },
      canaryStartTime: '2026-01-02T03:02:00Z',
      rolledBackImage: 'registry.alien6.io/algo/reco:2.1.2',
      conditions: [
        {
          type: 'Ready',
          status: 'True',
          observedGeneration: 1,
          lastTransitionTime: '2026-01-02T03:00:00Z',
          reason: 'Available',
          message: '3 of 3 replicas ready',
        },
      ],
    };
    const databaseStatus: Required<DatabaseStatus> = {
      phase: 'Ready',
      observedGeneration: 1,
      readyReplicas: 3,
      primary: 'myapp-db-0',
      streamingReplicas: 2,
      endpoint: `myapp-db.${namespace}.svc.cluster.local`,
      retryCount: 1,
      secretName: 'myapp-db-credentials',
      conditions: [{ type: 'Ready', status: 'True', lastTransitionTime: '2026-01-02T03:00:00Z', reason: 'Ready', message: 'ok' }],
    };
    for (const [object, status] of [
      [algorithm, algorithmStatus],
      [database, databaseStatus],
    ] as const) {
      const manifest = object as unknown as ManifestLike;
      const path = `${await objectPath(kc, { ...manifest, metadata: { ...manifest.metadata, namespace } })}/status`;
      await kubeRequest(kc, 'PATCH', path, { status }, 'application/merge-patch+json');
      assert.deepEqual((await get(manifest)).status, status, `${manifest.kind} status lost fields`);
    }
  });

  it('a PreviewEnvironment is cluster-scoped, keeps its repository immutable and its whole status', async () => {
    const name = uniqueName('pe');
    const environment: PreviewEnvironmentResource = {
      apiVersion: 'preview.alien6.io/v1alpha1',
      kind: 'PreviewEnvironment',
      metadata: { name },
      spec: {
        repository: { owner: 'alien6', name: 'reco', cloneUrl: 'https://github.com/alien6/reco.git' },
        pullRequest: {
          number: 42,
          headSha: '5f1d2c0b9a8e7d6c5b4a39281706f5e4d3c2b1a0',
          headRef: 'feature/ranking',
          baseRef: 'main',
          author: 'octocat',
          authorAssociation: 'MEMBER',
          labels: ['preview'],
          draft: false,
          fork: false,
          updatedAt: '2024-05-01T10:00:00Z',
        },
        ttl: '72h',
        overrides: {
          images: { 'recommendation-engine': 'registry.alien6.io/algo/reco:2.1.5' },
          env: { LOG_LEVEL: 'debug' },
          hostPrefix: 'reco',
        },
      },
    };
    const applied = await serverSideApply(kc, environment as unknown as ManifestLike, { fieldManager });
    assert.equal(applied.metadata.namespace, undefined);
    const live = await get({ ...(environment as unknown as ManifestLike) });
    assert.deepEqual(live.spec, environment.spec);

    const moved = await rejection({
      ...(environment as unknown as ManifestLike),
      spec: { ...environment.spec, repository: { ...environment.spec.repository, name: 'other' } },
    });
    assert.match(moved.message, /spec\.repository is immutable/);
    // GitHub ignores letter case: a repository renamed in case only keeps its environment.
    const recased = { owner: 'Alien6', name: 'Reco', cloneUrl: 'https://github.com/Alien6/Reco.git' };
    const renamed = await serverSideApply(
      kc,
      { ...environment, spec: { ...environment.spec, repository: recased } } as unknown as ManifestLike,
      {
        fieldManager,
      },
    );
    assert.deepEqual((renamed.spec as { repository: unknown }).repository, recased);
    const back = await rejection({
      ...(environment as unknown as ManifestLike),
      spec: {
        ...environment.spec,
        pullRequest: { ...environment.spec.pullRequest, headSha: 'a'.repeat(40), updatedAt: '2024-05-01T09:59:59Z' },
      },
    });
    assert.match(back.message, /spec\.pullRequest\.updatedAt cannot move back in time/);
    const badSha = await rejection({
      ...(environment as unknown as ManifestLike),
      metadata: { name: uniqueName('pe') },
      spec: { ...environment.spec, pullRequest: { ...environment.spec.pullRequest, headSha: 'main' } },
    });
    assert.match(badSha.message, /spec\.pullRequest\.headSha/);

    const status: Required<PreviewEnvironmentStatus> = {
      phase: 'Ready',
      observedGeneration: 1,
      namespace: 'pr-42-reco-5f1d2c',
      url: 'https://reco-pr-42.preview.alien6.io',
      deployedSha: '5f1d2c0b9a8e7d6c5b4a39281706f5e4d3c2b1a0',
      expiresAt: '2026-01-05T03:04:05Z',
      lastDeployedAt: '2026-01-02T03:04:05Z',
      expiredSha: '4e0c1b9a8f7e6d5c4b3a29180706f5e4d3c2b1a0',
      retryCount: 0,
      lastReconciled: '2026-01-02T03:04:05Z',
      github: { commentId: 1234567890123, deploymentId: 2345678901, checkRunId: 3456789012 },
      resources: [{ apiVersion: 'ai.alien6.io/v1', kind: 'Algorithm', name: 'recommendation-engine', ready: true, message: 'Running' }],
      conditions: [
        {
          type: 'Ready',
          status: 'True',
          observedGeneration: 1,
          lastTransitionTime: '2026-01-02T03:04:05Z',
          reason: 'Deployed',
          message: 'all resources ready',
        },
      ],
    };
    await kubeRequest(
      kc,
      'PATCH',
      `/apis/preview.alien6.io/v1alpha1/previewenvironments/${name}/status`,
      { status },
      'application/merge-patch+json',
    );
    assert.deepEqual((await get(environment as unknown as ManifestLike)).status, status);
    await kubeRequest(kc, 'DELETE', `/apis/preview.alien6.io/v1alpha1/previewenvironments/${name}`);
  });
});
