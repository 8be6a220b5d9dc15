// The chart's RBAC is enough, proven by use: the operator process runs with the chart's
// ServiceAccount token (not admin) and takes a pull request from its webhook to a Ready
// environment and, once the PR is closed, back to nothing. The same with the ClusterRole
// missing one verb fails with a message naming what was refused. The repository has no
// `.preview/main.ts`, so its `.preview/` is read through GitHub's contents API and no git
// process runs at all.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { CoreV1Api, KubeConfig } from '@kubernetes/client-node';
import { kubeconfigYaml } from '../cluster/start-cluster.js';
import { environmentName } from '../../src/intake/pull-request-environment-name.js';
import { installCrds, operatorCrdFiles } from '../fixtures/crds/install-crds.js';
import { KubeRequestError, kubeRequest, serverSideApply, type ManifestLike } from '../fixtures/crds/kube-apply.js';
import { metricValue, spawnOperator, waitStarted, type OperatorProcess } from '../fixtures/cli/operator-process.js';
import { renderChart } from '../fixtures/helm/render-chart.js';
import { PullRequestDriver } from '../github-emulator/pull-requests.js';
import { signBody } from '../github-emulator/webhook-delivery.js';
import { startTestEmulator } from '../github-emulator/test-emulator.js';
import { createNamespace, testCluster, uniqueName } from '../support/test-cluster.js';
import { waitFor } from '../support/wait.js';

const cluster = await testCluster();
const admin = cluster.kubeConfig;
const gh = await startTestEmulator();
const example = (file: string) => readFile(new URL(`../../examples/repository/.preview/${file}`, import.meta.url), 'utf8');
let dir: string;
const cleanups: (() => Promise<unknown>)[] = [];
const processes: OperatorProcess[] = [];

before(async () => {
  await installCrds(admin, operatorCrdFiles);
  dir = await mkdtemp(path.join(os.tmpdir(), 'helm-e2e-'));
});

after(async () => {
  for (const p of processes) if (p.child.exitCode === null) p.child.kill('SIGKILL');
  for (const cleanup of cleanups.reverse()) await cleanup().catch(() => {});
  await rm(dir, { recursive: true, force: true });
});

const clusterPath = (o: ManifestLike) =>
  `/apis/rbac.authorization.k8s.io/v1/${o.kind === 'ClusterRole' ? 'clusterroles' : 'clusterrolebindings'}/${o.metadata.name}`;

/** The chart's identity (optionally with one rule changed), a kubeconfig with its token, the release namespace. */
type PolicyRule = { apiGroups: string[]; resources: string[]; verbs: string[] };

async function chartIdentity(edit?: (rules: PolicyRule[]) => void): Promise<{ kubeconfig: string; namespace: string }> {
  const namespace = uniqueName('helm-e2e');
  const release = uniqueName('po');
  await createNamespace(admin, namespace);
  cleanups.push(() => kubeRequest(admin, 'DELETE', `/api/v1/namespaces/${namespace}`));
  const objects = await renderChart({ release, namespace });
  const kinds = [
    'ServiceAccount',
    'ClusterRole',
    'ClusterRoleBinding',
    'Role',
    'RoleBinding',
    'ValidatingAdmissionPolicy',
    'ValidatingAdmissionPolicyBinding',
  ];
  for (const object of objects.filter((o) => kinds.includes(o.kind))) {
    // The operator's own ClusterRole; the aggregated -view/-edit roles are for people.
    if (object.kind === 'ClusterRole' && !/-(view|edit)$/.test(object.metadata.name) && edit) edit(object.rules as never);
    await serverSideApply(admin, object, { fieldManager: 'helm-test', namespace });
    if (object.kind.startsWith('Cluster')) cleanups.push(() => kubeRequest(admin, 'DELETE', clusterPath(object)));
    const policyPath = `/apis/admissionregistration.k8s.io/v1/${object.kind.toLowerCase()}s/${object.metadata.name}`;
    if (object.kind.startsWith('Validating')) cleanups.push(() => kubeRequest(admin, 'DELETE', policyPath));
  }
  const serviceAccount = objects.find((o) => o.kind === 'ServiceAccount')!.metadata.name;
  const token = await admin.makeApiClient(CoreV1Api).createNamespacedServiceAccountToken({
    namespace,
    name: serviceAccount,
    body: { spec: { expirationSeconds: 3600, audiences: [] } },
  });
  const kubeconfig = path.join(dir, `${release}.kubeconfig`);
  await writeFile(kubeconfig, kubeconfigYaml(cluster.server, admin.getCurrentCluster()!.caFile!, token.status!.token, serviceAccount));
  // The operator runs under the chart's admission policy too, once it is enforced (a refused dry run says so).
  const asOperator = new KubeConfig();
  asOperator.loadFromFile(kubeconfig);
  const canary = () =>
    kubeRequest(asOperator, 'POST', `/api/v1/namespaces/${namespace}/configmaps?dryRun=All`, { metadata: { name: 'c' } });
  const refused = (err: unknown) => (err instanceof KubeRequestError && /AdmissionPolicy/.test(err.message)) || Promise.reject(err);
  await waitFor("the chart's admission policy to be enforced", () => canary().then(() => false, refused), { timeoutMs: 30_000 });
  return { kubeconfig, namespace };
}

async function operatorFor(
  identity: { kubeconfig: string; namespace: string },
  repo: PullRequestDriver,
  secret: string,
  app: { id: number; privateKey: string },
  selector: string,
): Promise<OperatorProcess> {
  const key = path.join(dir, `${identity.namespace}.pem`);
  const secretFile = path.join(dir, `${identity.namespace}.secret`);
  await writeFile(key, app.privateKey);
  await writeFile(secretFile, secret);
  const p = spawnOperator(['run'], {
    KUBECONFIG: identity.kubeconfig,
    PREVIEW_OPERATOR_LEADER_ELECTION_NAMESPACE: identity.namespace,
    PREVIEW_OPERATOR_WEBHOOK_HOST: '127.0.0.1',
    PREVIEW_OPERATOR_WEBHOOK_PORT: '0',
    PREVIEW_OPERATOR_METRICS_PORT: '0',
    PREVIEW_OPERATOR_WEBHOOK_SECRET_FILE: secretFile,
    PREVIEW_OPERATOR_GITHUB_API_URL: gh.url,
    PREVIEW_OPERATOR_GITHUB_APP_ID: String(app.id),
    PREVIEW_OPERATOR_GITHUB_APP_PRIVATE_KEY_FILE: key,
    PREVIEW_OPERATOR_GIT_ALLOWED_PROTOCOLS: 'file',
    PREVIEW_OPERATOR_CHECKOUT_CACHE_DIR: path.join(dir, identity.namespace, 'checkouts'),
    PREVIEW_OPERATOR_PREVIEW_DOMAIN: 'preview.test',
    // The chart's identity is what this test is about: previews over plain HTTP (the TLS tests are
    // preview-certificates.test.ts, against the cluster's cert-manager).
    PREVIEW_OPERATOR_TLS_ISSUER: 'none',
    // This cluster is shared with other test files: this operator minds its own objects only.
    PREVIEW_OPERATOR_CONTROLLERS: 'algorithm,database,preview-environment,webhook',
    PREVIEW_OPERATOR_WATCH_NAMESPACE: environmentName(repo.repository, 1),
    PREVIEW_OPERATOR_ENVIRONMENT_SELECTOR: selector,
  });
  processes.push(p);
  await waitStarted(p);
  return p;
}

async function demoRepository(name: string): Promise<{ repo: PullRequestDriver; secret: string; app: { id: number; privateKey: string } }> {
  const secret = randomBytes(16).toString('hex');
  const app = gh.createApp();
  const repo = await PullRequestDriver.create(gh, {
    owner: 'e2e',
    name,
    webhookSecret: secret,
    initialFiles: { '.preview/preview.yaml': await example('preview.yaml'), 'README.md': '# e2e\n' },
  });
  cleanups.push(() => repo.cleanup());
  gh.installApp(app.id, [repo.repository]);
  return { repo, secret, app };
}

/** The pull request's environment, labelled so that only this test's operator reconciles it. */
async function openPullRequest(repo: PullRequestDriver, operator: OperatorProcess, selector: string, secret: string): Promise<string> {
  const name = environmentName(repo.repository, 1);
  cleanups.push(() => kubeRequest(admin, 'DELETE', `/apis/preview.alien6.io/v1alpha1/previewenvironments/${name}`));
  const [key, value] = selector.split('=') as [string, string];
  const { delivery } = await repo.open({ files: { 'README.md': '# e2e\n\nchanged\n' }, author: 'alice', authorAssociation: 'MEMBER' });
  // The repository is on disk: the clone URL GitHub would send is replaced (and the body signed
  // again, as GitHub signs it); the `dev` command does the same in-process.
  type Payload = { repository: { clone_url: string }; pull_request: { base: { repo: { clone_url: string } } } };
  const payload = JSON.parse(delivery.body) as Payload;
  payload.repository.clone_url = repo.cloneUrl;
  payload.pull_request.base.repo.clone_url = repo.cloneUrl;
  const body = JSON.stringify(payload);
  const answer = await delivery.deliver(operator.webhookUrl(), { body, headers: { 'x-hub-signature-256': signBody(secret, body).sha256 } });
  assert.equal(answer.status, 202, answer.body);
  // Accepted: the PreviewEnvironment is written just after the answer.
  await waitFor(
    'the PreviewEnvironment written',
    () => kubeRequest(admin, 'GET', `/apis/preview.alien6.io/v1alpha1/previewenvironments/${name}`),
    { timeoutMs: 30_000 },
  );
  // The label hands the environment to this test's operator (its selector).
  await kubeRequest(
    admin,
    'PATCH',
    `/apis/preview.alien6.io/v1alpha1/previewenvironments/${name}`,
    { metadata: { labels: { [key]: value } } },
    'application/merge-patch+json',
  );
  return name;
}

test("with the chart's token: webhook → Ready → PR closed → gone", async () => {
  const identity = await chartIdentity();
  const { repo, secret, app } = await demoRepository(uniqueName('shop'));
  const selector = `e2e.preview.alien6.io/run=${identity.namespace}`;
  const operator = await operatorFor(identity, repo, secret, app, selector);
  const name = await openPullRequest(repo, operator, selector, secret);

  const ready = await waitFor(
    'the environment to be Ready',
    async () => {
      const env = (await kubeRequest(admin, 'GET', `/apis/preview.alien6.io/v1alpha1/previewenvironments/${name}`)) as {
        status?: { phase?: string; url?: string; conditions?: unknown };
      };
      if (env.status?.phase === 'Failed') throw new Error(`Failed: ${JSON.stringify(env.status.conditions)}`);
      return env.status?.phase === 'Ready' ? env : undefined;
    },
    { timeoutMs: 180_000, intervalMs: 500 },
  );
  assert.match(ready.status!.url!, /^http:\/\/reco-pr-1-[0-9a-f]{12}\.preview\.test/);
  assert.equal(gh.comments(repo.repository, 1).length, 1);
  // `.preview/` came through the API: one listing and one blob; no fetch made a repository in the checkout cache.
  const reads = gh
    .requestsSince(0, { repository: repo.repository })
    .filter((r) => r.operationId === 'repos/get-content' || r.operationId === 'git/get-blob');
  assert.deepEqual(
    reads.map((r) => `${r.operationId} ${r.status}`),
    ['repos/get-content 200', 'git/get-blob 200'],
  );
  assert.equal(existsSync(path.join(dir, identity.namespace, 'checkouts', 'repositories')), false, 'no git process fetched the repository');
  // The delivery was timed to applied and to Ready, once each (the operator's histograms).
  assert.equal(await metricValue(operator.metricsUrl(), 'preview_operator_webhook_to_applied_seconds_count'), 1);
  assert.equal(await metricValue(operator.metricsUrl(), 'preview_operator_webhook_to_ready_seconds_count'), 1);

  const { delivery } = await repo.close(1);
  assert.equal((await delivery.deliver(operator.webhookUrl())).status, 202);
  await waitFor(
    'the environment and its namespace to be gone',
    async () => {
      for (const path of [`/apis/preview.alien6.io/v1alpha1/previewenvironments/${name}`, `/api/v1/namespaces/${name}`]) {
        try {
          await kubeRequest(admin, 'GET', path);
          return false;
        } catch (err) {
          if (!(err instanceof KubeRequestError && err.statusCode === 404)) throw err;
        }
      }
      return true;
    },
    { timeoutMs: 120_000, intervalMs: 500 },
  );
  assert.match(gh.comments(repo.repository, 1)[0]!.body, /destroyed/i);
  operator.child.kill('SIGTERM');
  assert.equal(await operator.exited, 0);
  const errors = operator.lines.filter((l) => l.level === 'error' && /forbidden/i.test(JSON.stringify(l)));
  assert.deepEqual(errors, [], 'no request of the operator was refused');
});

test('a ClusterRole missing one verb (create namespaces): the environment fails with a message naming it', async () => {
  const identity = await chartIdentity((rules) => {
    const rule = rules.find((r) => r.apiGroups.includes('') && r.resources.includes('namespaces'))!;
    rule.verbs = rule.verbs.filter((v) => v !== 'create');
  });
  const { repo, secret, app } = await demoRepository(uniqueName('shop'));
  const selector = `e2e.preview.alien6.io/run=${identity.namespace}`;
  const operator = await operatorFor(identity, repo, secret, app, selector);
  const name = await openPullRequest(repo, operator, selector, secret);
  const message = await waitFor(
    'the refusal to be reported',
    async () => {
      const env = (await kubeRequest(admin, 'GET', `/apis/preview.alien6.io/v1alpha1/previewenvironments/${name}`)) as {
        status?: { conditions?: { message?: string }[] };
      };
      const inStatus = env.status?.conditions?.map((c) => c.message ?? '').find((m) => /forbidden/i.test(m));
      const inLog = operator.lines.map((l) => JSON.stringify(l)).find((l) => /forbidden/i.test(l) && /namespaces/.test(l));
      return inStatus ?? inLog;
    },
    { timeoutMs: 120_000, intervalMs: 500 },
  );
  assert.match(message, /cannot create resource \\?"namespaces\\?"/);
  operator.child.kill('SIGTERM');
  await operator.exited;
});
