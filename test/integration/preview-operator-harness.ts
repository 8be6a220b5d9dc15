// Support for the PreviewEnvironment controller's tests (not a test file): an operator process
// in miniature — a Manager acting as its own ServiceAccount (so the audit log tells its writes
// apart), the controller, a RecordingReporter and a repository cache — plus real repositories
// served over file:// and the Algorithm and Database controllers scoped to one environment's
// namespace (test files share the cluster: nothing here may act on another file's objects).
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { registerAlgorithmController } from '../../src/controllers/algorithm-controller.js';
import type { AlgorithmControllerOptions } from '../../src/controllers/algorithm-reconciler.js';
import { registerDatabaseController } from '../../src/controllers/database-controller.js';
import {
  registerPreviewEnvironmentController,
  type EnvironmentObject,
  type PreviewEnvironmentControllerOptions,
} from '../../src/controllers/preview-environment.js';
import { previewEnvironmentFinalizer } from '../../src/controllers/preview-environment-teardown.js';
import { RepositoryCache } from '../../src/git/repository-cache.js';
import {
  KubeClient,
  Manager,
  NotFoundError,
  silentLogger,
  type Controller,
  type Reconciler,
  type KubeObject,
} from '../../src/kube/index.js';
import { Sandbox } from '../../src/synth/sandbox.js';
import { installCrds } from '../fixtures/crds/install-crds.js';
import { createGitRepository, type FileChanges, type GitRepository } from '../support/git-repository.js';
import { RecordingReporter } from '../support/recording-reporter.js';
import { newIdentity, testCluster, type Identity, type TestCluster } from '../support/test-cluster.js';
import { waitFor } from '../support/wait.js';
export { previewYaml, previewYamlHost } from '../support/preview-yaml.js';

export const previewDomain = 'preview.test.example';
const environmentsApi = '/apis/preview.alien6.io/v1alpha1/previewenvironments';

export interface PreviewOperator {
  cluster: TestCluster;
  /** The operator's identity (its writes, and only its, are `audit.writes(mark, { user: identity.username })`). */
  identity: Identity;
  /** The Algorithm and Database controllers' identity (kept apart so the operator's audit shows only its own writes). */
  workloadIdentity: Identity;
  /** An admin client for the test's own reads and writes. */
  admin: KubeClient;
  reporter: RecordingReporter;
  controller: Controller<EnvironmentObject>;
  /** The label every environment of this operator carries (its environmentSelector). */
  selector: { key: string; value: string };
  /** How many reconciles of the environment `name` the PreviewEnvironment controller has begun. */
  reconciles(name: string): number;
  stop(): Promise<void>;
}

/** Controller options a test may set; `reporter` defaults to a RecordingReporter (the one `PreviewOperator.reporter` returns). */
export type OperatorOptions = Partial<Omit<PreviewEnvironmentControllerOptions, 'repositories' | 'domain' | 'environmentSelector'>>;

/** Starts a preview operator for one test file. */
export async function startPreviewOperator(options: OperatorOptions = {}): Promise<PreviewOperator> {
  const cluster = await testCluster();
  await installCrds(cluster.kubeConfig);
  const identity = await newIdentity(cluster, 'preview-operator');
  const workloadIdentity = await newIdentity(cluster, 'workload-controllers');
  const client = new KubeClient(identity.kubeConfig);
  const admin = new KubeClient(cluster.kubeConfig, { fieldManager: 'preview-tests' });
  const cacheDir = await mkdtemp(path.join(tmpdir(), 'preview-repos-'));
  const repositories = new RepositoryCache({ cacheDir, allowedProtocols: ['https:', 'file:'] });
  const recording = new RecordingReporter();
  const { reporter = recording, ...controllerOptions } = options;
  const selector = { key: 'preview.alien6.io/test-operator', value: randomBytes(4).toString('hex') };
  const manager = new Manager({ client, leaderElection: false, logger: silentLogger, drainDeadlineMs: 10_000 });
  // Counted per key: the cluster's other test files wake this controller for names it does not hold.
  const reconciles = new Map<string, number>();
  const addController = manager.addController.bind(manager);
  manager.addController = ((controllerOptions: Parameters<Manager['addController']>[0]) => {
    const { reconciler } = controllerOptions;
    const counted: Reconciler = {
      reconcile: (key, context) => {
        reconciles.set(key, (reconciles.get(key) ?? 0) + 1);
        return reconciler.reconcile(key, context);
      },
    };
    return addController({ ...controllerOptions, reconciler: counted });
  }) as Manager['addController'];
  const { controller } = registerPreviewEnvironmentController(manager, {
    reporter,
    repositories,
    domain: previewDomain,
    environmentSelector: `${selector.key}=${selector.value}`,
    // Shorter than the default 20 s, long enough for a saturated test machine.
    sandbox: new Sandbox({ timeoutMs: 15_000 }),
    certificatePollMs: 500,
    namespacePollMs: 500,
    // Deploying is written at once, so a test sees every state; preview-environment-write-count.test.ts uses the default wait.
    deployingReportDelayMs: 0,
    logger: silentLogger,
    ...controllerOptions,
  });
  manager.start();
  await manager.waitForCacheSync();
  return {
    cluster,
    identity,
    workloadIdentity,
    admin,
    reporter: recording,
    controller,
    selector,
    reconciles: (name) => reconciles.get(name) ?? 0,
    async stop() {
      await manager.stop();
      client.close();
      admin.close();
      await rm(cacheDir, { recursive: true, force: true });
    },
  };
}

/** The Algorithm and Database controllers (issue 5) for one environment's namespace. */
export async function startWorkloadControllers(
  operator: PreviewOperator,
  namespace: string,
  algorithm: Pick<AlgorithmControllerOptions, 'progressIntervalMs'> = {},
): Promise<() => Promise<void>> {
  const client = new KubeClient(operator.workloadIdentity.kubeConfig);
  const manager = new Manager({ client, leaderElection: false, logger: silentLogger, drainDeadlineMs: 5000 });
  registerAlgorithmController(manager, { ...algorithm, namespace, workers: 1 });
  registerDatabaseController(manager, { namespace, workers: 1 });
  manager.start();
  return async () => {
    await manager.stop();
    client.close();
  };
}

/** A repository with `.preview/` on its default branch. */
export async function previewRepository(files: FileChanges): Promise<GitRepository> {
  return createGitRepository({ owner: 'octo-org', repo: `app-${randomBytes(3).toString('hex')}`, initialFiles: files });
}

export function environmentName(repository: GitRepository, pullRequest: number): string {
  return `pr-${pullRequest}-${repository.repo}`;
}

export interface EnvironmentSpecInput {
  repository: GitRepository;
  pullRequest: number;
  headSha: string;
  authorAssociation?: string;
  fork?: boolean;
  ttl?: string;
  /** Written with the controller's finalizer, as the intake writes it beside a PreviewEnvironment controller. */
  withFinalizer?: boolean;
}

/** Creates (or updates) the PreviewEnvironment of a pull request, as the GitHub side would. */
export async function applyEnvironment(operator: PreviewOperator, input: EnvironmentSpecInput): Promise<string> {
  const name = environmentName(input.repository, input.pullRequest);
  await operator.admin.apply({
    apiVersion: 'preview.alien6.io/v1alpha1',
    kind: 'PreviewEnvironment',
    metadata: {
      name,
      labels: { [operator.selector.key]: operator.selector.value },
      ...(input.withFinalizer ? { finalizers: [previewEnvironmentFinalizer] } : {}),
    },
    spec: {
      repository: { owner: input.repository.owner, name: input.repository.repo, cloneUrl: input.repository.cloneUrl },
      pullRequest: {
        number: input.pullRequest,
        headSha: input.headSha,
        headRef: `feature-${input.pullRequest}`,
        baseRef: input.repository.defaultBranch,
        author: 'octocat',
        authorAssociation: input.authorAssociation ?? 'MEMBER',
        fork: input.fork ?? false,
      },
      ...(input.ttl ? { ttl: input.ttl } : {}),
    },
  });
  return name;
}

export async function getEnvironment(operator: PreviewOperator, name: string): Promise<EnvironmentObject | undefined> {
  try {
    return await operator.admin.get<EnvironmentObject>({ apiVersion: 'preview.alien6.io/v1alpha1', kind: 'PreviewEnvironment', name });
  } catch (err) {
    if (err instanceof NotFoundError) return undefined;
    throw err;
  }
}

export async function deleteEnvironment(operator: PreviewOperator, name: string): Promise<void> {
  await operator.admin.request({ method: 'DELETE', path: `${environmentsApi}/${name}` }).catch((err) => {
    if (!(err instanceof NotFoundError)) throw err;
  });
}

/** Until the count of `name`'s reconciles has not moved for `quietMs`; returns it (a test that something woke nothing). */
export async function reconcilesSettled(operator: PreviewOperator, name: string, quietMs = 3000): Promise<number> {
  let [count, since] = [operator.reconciles(name), Date.now()];
  await waitFor(
    `${name}'s reconciles to go quiet`,
    () => {
      if (operator.reconciles(name) !== count) [count, since] = [operator.reconciles(name), Date.now()];
      return Date.now() - since >= quietMs;
    },
    { timeoutMs: 30_000, intervalMs: 100 },
  );
  return count;
}

/** Until every one of `names` is gone from the cluster (its teardown done, its finalizer dropped). */
export async function waitForEnvironmentsGone(operator: PreviewOperator, names: readonly string[], timeoutMs = 60_000): Promise<void> {
  const gone = async () => (await Promise.all(names.map((name) => getEnvironment(operator, name)))).every((env) => env === undefined);
  await waitFor(`${names.join(', ')} to be gone`, gone, { timeoutMs });
}

/** Waits until the environment's status satisfies `check`; returns it. */
export function waitForEnvironment(
  operator: PreviewOperator,
  name: string,
  what: string,
  check: (env: EnvironmentObject) => boolean,
  timeoutMs = 60_000,
): Promise<EnvironmentObject> {
  return waitFor(
    `${name}: ${what}`,
    async () => {
      const env = await getEnvironment(operator, name);
      if (!env) return undefined;
      if (check(env)) return env;
      return undefined;
    },
    { timeoutMs, intervalMs: 100 },
  );
}

/** Lists the objects of a kind in a namespace (names only), for assertions. */
export async function namesOf(operator: PreviewOperator, kind: { apiVersion: string; kind: string }, namespace: string): Promise<string[]> {
  const { items } = await operator.admin.list<KubeObject>(kind, { namespace });
  return items.map((i) => i.metadata.name!).sort();
}

export async function namespaceExists(operator: PreviewOperator, name: string): Promise<boolean> {
  try {
    await operator.admin.get({ apiVersion: 'v1', kind: 'Namespace', name });
    return true;
  } catch (err) {
    if (err instanceof NotFoundError) return false;
    throw err;
  }
}
