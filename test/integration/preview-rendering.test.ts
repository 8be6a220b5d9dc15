// The rendering pipeline without a cluster: a real repository over file://, the example
// repository's `.preview/` (preview.yaml plus main.ts run in the sandbox), the policy, and the
// namespace guards taken from the operator's own rendering whatever main.ts does to them.
// Then the same renderer reading `.preview/` through GitHub's REST API (the emulator, serving
// a real repository), as `run` does: no git process unless main.ts must run.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { previewHostname, type PreviewEnvironmentSpec } from '../../constructs/index.js';
import { readAhead, renderEnvironment, type RenderRequest } from '../../src/controllers/preview-environment-rendering.js';
import { RepositoryCache } from '../../src/git/repository-cache.js';
import { createGitHubClients } from '../../src/github/octokit-factory.js';
import { GitHubPreviewFiles } from '../../src/github/preview-files-api.js';
import { repositoryHash } from '../../src/synth/render-preview.js';
import { Semaphore } from '../../src/kube/semaphore.js';
import { defaultPolicySettings } from '../../src/policy/policy-config.js';
import { AllowedKinds } from '../../src/synth/guard-allowed-kinds.js';
import { Sandbox } from '../../src/synth/sandbox.js';
import { PullRequestDriver } from '../github-emulator/pull-requests.js';
import { startTestEmulator } from '../github-emulator/test-emulator.js';
import { createGitRepository, type GitRepository } from '../support/git-repository.js';
import { previewYaml } from '../support/preview-yaml.js';

const example = (file: string) =>
  readFileSync(fileURLToPath(new URL(`../../examples/repository/.preview/${file}`, import.meta.url)), 'utf8');

let repository: GitRepository;
let cacheDir: string;
let repositories: RepositoryCache;
const sandbox = new Sandbox({ timeoutMs: 15_000 });
const sandboxRuns = new Semaphore(2);
const gh = await startTestEmulator();

before(async () => {
  repository = await createGitRepository({ repo: 'reco', initialFiles: { '.preview/preview.yaml': example('preview.yaml') } });
  cacheDir = await mkdtemp(path.join(tmpdir(), 'preview-render-'));
  repositories = new RepositoryCache({ cacheDir, allowedProtocols: ['file:'] });
});
after(async () => {
  await repository?.cleanup();
  if (cacheDir) await rm(cacheDir, { recursive: true, force: true });
});

function request(
  headSha: string,
  pullRequest: number,
  authorAssociation: 'MEMBER' | 'NONE' = 'MEMBER',
  from: Pick<GitRepository, 'owner' | 'repo' | 'cloneUrl'> = repository,
): RenderRequest {
  const spec: PreviewEnvironmentSpec = {
    repository: { owner: from.owner, name: from.repo, cloneUrl: from.cloneUrl },
    pullRequest: { number: pullRequest, headSha, headRef: `feature-${pullRequest}`, baseRef: 'main', authorAssociation },
  };
  return {
    name: `pr-${pullRequest}-reco`,
    spec,
    settings: {
      domain: 'preview.example.com',
      ingressClassName: 'nginx',
      tls: { issuer: { name: 'preview-issuer', kind: 'ClusterIssuer' } },
      podSecurity: 'restricted',
    },
    trust: defaultPolicySettings.trust,
    allowedKinds: new AllowedKinds(),
  };
}

describe('rendering an environment from a repository', () => {
  it('runs the example main.ts in the sandbox and passes the policy', async () => {
    const headSha = await repository.openPullRequest(1, { files: { '.preview/main.ts': example('main.ts') } });
    const outcome = await renderEnvironment(request(headSha, 1), { repositories, sandbox, sandboxRuns });
    assert.ok(outcome.ok, outcome.ok ? '' : outcome.failure.message);
    const { rendered } = outcome;
    assert.equal(rendered.renderer, 'sandbox');
    const host = previewHostname({
      hostPrefix: 'reco',
      repositoryName: repository.repo,
      repositoryHash: repositoryHash({ owner: repository.owner, name: repository.repo }),
      pullRequest: 1,
      domain: 'preview.example.com',
    });
    assert.equal(rendered.url, `https://${host}`);
    assert.equal(rendered.namespace.metadata.name, 'pr-1-reco');
    const objects = rendered.objects.map((o) => `${o.kind}/${o.metadata.name}`).sort();
    assert.deepEqual(objects, [
      'Algorithm/ranking-api',
      'Algorithm/ranking-worker',
      'Algorithm/recommendation-engine',
      'Certificate/preview-tls',
      'ConfigMap/ranking-api-env',
      'ConfigMap/ranking-fixtures',
      'ConfigMap/ranking-worker-env',
      'ConfigMap/recommendation-engine-env',
      'Database/myapp-db',
      'Ingress/preview',
      'LimitRange/preview-defaults',
      'NetworkPolicy/preview-isolation',
      'ResourceQuota/preview-quota',
      'ServiceAccount/default',
    ]);
    assert.ok(rendered.objects.every((o) => o.metadata.namespace === 'pr-1-reco'));
    const fixtures = rendered.objects.find((o) => o.metadata.name === 'ranking-fixtures')!;
    assert.equal((fixtures.data as Record<string, string>)['commit.txt'], headSha);
  });

  it('sandbox runs wait for a free slot: no more run at once than the limit, whatever the workers', async () => {
    const headSha = await repository.openPullRequest(6, { files: { '.preview/main.ts': example('main.ts') } });
    let running = 0;
    let most = 0;
    class CountingSandbox extends Sandbox {
      override async run(...args: Parameters<Sandbox['run']>): ReturnType<Sandbox['run']> {
        most = Math.max(most, ++running);
        try {
          return await super.run(...args);
        } finally {
          running--;
        }
      }
    }
    const deps = { repositories, sandbox: new CountingSandbox({ timeoutMs: 15_000 }), sandboxRuns: new Semaphore(1) };
    const outcomes = await Promise.all([0, 1, 2].map((n) => renderEnvironment(request(headSha, 60 + n), deps)));
    assert.ok(
      outcomes.every((o) => o.ok && o.rendered.renderer === 'sandbox'),
      JSON.stringify(outcomes.map((o) => (o.ok ? 'ok' : o.failure.message))),
    );
    assert.equal(most, 1, 'three renders at once, one sandbox process at a time');
  });

  it("a main.ts that loosens the namespace's quota and isolation changes nothing of them", async () => {
    const headSha = await repository.openPullRequest(2, {
      files: {
        '.preview/main.ts': `
          import { cdk8s, type PreviewEnvironmentChart } from 'preview-operator/constructs';
          export default function (chart: PreviewEnvironmentChart): void {
            chart.previewNamespace.resourceQuota.addJsonPatch(cdk8s.JsonPatch.replace('/spec/hard/limits.cpu', '1000'));
            chart.previewNamespace.networkPolicy.addJsonPatch(cdk8s.JsonPatch.replace('/spec/egress', [{}]));
            chart.previewNamespace.namespace.addJsonPatch(cdk8s.JsonPatch.add('/metadata/labels/pod-security.kubernetes.io~1enforce', 'privileged'));
          }`,
      },
    });
    const outcome = await renderEnvironment(request(headSha, 2), { repositories, sandbox, sandboxRuns });
    assert.ok(outcome.ok, outcome.ok ? '' : outcome.failure.message);
    const quota = outcome.rendered.objects.find((o) => o.kind === 'ResourceQuota')!;
    assert.equal((quota.spec as { hard: Record<string, string> }).hard['limits.cpu'], '16');
    const isolation = outcome.rendered.objects.find((o) => o.kind === 'NetworkPolicy')!;
    assert.notDeepEqual((isolation.spec as { egress: unknown[] }).egress, [{}]);
    assert.equal(outcome.rendered.namespace.metadata.labels?.['pod-security.kubernetes.io/enforce'], 'restricted');
  });

  it("GPUs the quota does not bound are refused: an Algorithm or a pod asking for another vendor's, past the ceiling", async () => {
    // The example's quota bounds nvidia.com/gpu (4, from preview.yaml); main.ts asks for AMD's, which nothing would bound.
    const headSha = await repository.openPullRequest(3, {
      files: {
        '.preview/main.ts': `
          import { Algorithm, type PreviewEnvironmentChart } from 'preview-operator/constructs';
          export default function (chart: PreviewEnvironmentChart): void {
            new Algorithm(chart, 'trainer', {
              name: 'trainer', image: 'registry.example.com/team/trainer:1.0', resources: { gpu: 'amd.com/gpu', gpuCount: 16 },
            });
          }`,
      },
    });
    const outcome = await renderEnvironment(request(headSha, 3), { repositories, sandbox, sandboxRuns });
    assert.equal(outcome.ok, false);
    assert.match(
      outcome.ok ? '' : outcome.failure.message,
      /Algorithm\.ai\.alien6\.io pr-3-reco\/trainer: spec\.resources\.gpu asks for 16 amd\.com\/gpu per pod, but the namespace's quota does not bound it \(it bounds nvidia\.com\/gpu\)/,
    );
  });

  it('a missing or invalid configuration is a failure with every error, not an exception', async () => {
    const missing = await repository.openPullRequest(3, { files: { '.preview/preview.yaml': null } });
    const none = await renderEnvironment(request(missing, 3), { repositories, sandbox, sandboxRuns });
    assert.ok(!none.ok && none.failure.kind === 'ConfigMissing', JSON.stringify(none));
    const invalid = await repository.openPullRequest(4, { files: { '.preview/preview.yaml': 'version: 2\nalgorithms: [{ name: x }]\n' } });
    const bad = await renderEnvironment(request(invalid, 4), { repositories, sandbox, sandboxRuns });
    assert.ok(!bad.ok && bad.failure.kind === 'ConfigInvalid');
    assert.deepEqual(bad.failure.configErrors?.map((e) => e.path).sort(), ['/algorithms/0/image', '/version']);
    const gone = await renderEnvironment(request('f'.repeat(40), 5), { repositories, sandbox, sandboxRuns });
    assert.ok(!gone.ok && gone.failure.kind === 'SourceUnavailable', JSON.stringify(gone));
  });
});

describe('rendering with .preview/ read through the GitHub API', () => {
  let driver: PullRequestDriver;
  let files: GitHubPreviewFiles;
  let cacheDir: string;

  before(async () => {
    driver = await PullRequestDriver.create(gh, {
      owner: 'render',
      initialFiles: { '.preview/preview.yaml': previewYaml(), 'README.md': 'readme\n' },
    });
    files = new GitHubPreviewFiles({
      clients: createGitHubClients({
        auth: { type: 'token', token: gh.createToken('renderer') },
        baseUrl: gh.url,
        throttle: { enabled: false },
      }),
    });
    cacheDir = await mkdtemp(path.join(tmpdir(), 'preview-render-api-'));
  });
  after(async () => {
    await driver?.cleanup();
    if (cacheDir) await rm(cacheDir, { recursive: true, force: true });
  });

  /** A checkout cache of its own, so its git commands are this test's. */
  const freshCache = (name: string) => new RepositoryCache({ cacheDir: path.join(cacheDir, name), allowedProtocols: ['file:'] });
  const operationsSince = (mark: number) => gh.requestsSince(mark, { repository: driver.repository }).map((r) => r.operationId);

  it('a trusted pull request without main.ts renders with no git process: one listing and one blob', async () => {
    const { pullRequest } = await driver.open({ files: { 'app.txt': 'v1\n' }, authorAssociation: 'MEMBER' });
    const repositories = freshCache('trusted');
    const mark = gh.mark();
    const outcome = await renderEnvironment(request(pullRequest.head.sha, pullRequest.number, 'MEMBER', driver.git), {
      repositories,
      files,
      sandbox,
      sandboxRuns,
    });
    assert.ok(outcome.ok, outcome.ok ? '' : outcome.failure.message);
    assert.deepEqual([outcome.rendered.renderer, outcome.rendered.configSource], ['constructs', { from: 'head' }]);
    assert.deepEqual(
      outcome.rendered.objects.filter((o) => o.kind === 'Algorithm').map((o) => (o.spec as { image: string }).image),
      ['registry.example.com/team/api:1.0'],
    );
    assert.deepEqual(Object.fromEntries(repositories.gitCommands), {}, 'no git process');
    assert.deepEqual(operationsSince(mark), ['repos/get-content', 'git/get-blob']);
  });

  it('read ahead when the delivery is accepted, the render then asks GitHub nothing; a failed read ahead is left to the render', async () => {
    const { pullRequest } = await driver.open({
      files: { '.preview/preview.yaml': previewYaml({ image: 'registry.example.com/team/api:ahead' }) },
      authorAssociation: 'MEMBER',
    });
    const req = request(pullRequest.head.sha, pullRequest.number, 'MEMBER', driver.git);
    const ahead = gh.mark();
    await readAhead(files, req.spec);
    assert.deepEqual(operationsSince(ahead), ['repos/get-content', 'git/get-blob'], 'the listing and the new preview.yaml');
    const mark = gh.mark();
    const outcome = await renderEnvironment(req, { repositories: freshCache('ahead'), files, sandbox, sandboxRuns });
    assert.ok(outcome.ok, outcome.ok ? '' : outcome.failure.message);
    assert.deepEqual(
      outcome.rendered.objects.filter((o) => o.kind === 'Algorithm').map((o) => (o.spec as { image: string }).image),
      ['registry.example.com/team/api:ahead'],
    );
    assert.deepEqual(operationsSince(mark), [], 'everything was read ahead');

    const missing = request('e'.repeat(40), pullRequest.number, 'MEMBER', driver.git);
    await readAhead(files, missing.spec);
    const gone = await renderEnvironment(missing, { repositories: freshCache('ahead-missing'), files, sandbox, sandboxRuns });
    assert.equal(gone.ok ? 'ok' : gone.failure.kind, 'SourceUnavailable', 'the render meets the failure again and reports it');
  });

  it('a trusted pull request with main.ts: .preview/ through the API, git only to check the commit out for the sandbox', async () => {
    const { pullRequest } = await driver.open({
      files: { '.preview/main.ts': example('main.ts'), '.preview/preview.yaml': example('preview.yaml') },
      authorAssociation: 'MEMBER',
    });
    const repositories = freshCache('sandbox');
    const outcome = await renderEnvironment(request(pullRequest.head.sha, pullRequest.number, 'MEMBER', driver.git), {
      repositories,
      files,
      sandbox,
      sandboxRuns,
    });
    assert.ok(outcome.ok, outcome.ok ? '' : outcome.failure.message);
    assert.equal(outcome.rendered.renderer, 'sandbox');
    const fixtures = outcome.rendered.objects.find((o) => o.metadata.name === 'ranking-fixtures')!;
    assert.equal((fixtures.data as Record<string, string>)['commit.txt'], pullRequest.head.sha);
    const commands = Object.fromEntries(repositories.gitCommands);
    assert.ok(commands.fetch === 1 && (commands.worktree ?? 0) >= 1, JSON.stringify(commands));
    assert.equal(
      commands['ls-tree'],
      1,
      "the listing of .preview/ came from the API; git's one ls-tree counts the commit before its checkout",
    );
    assert.equal(commands['cat-file'], undefined, 'the files came from the API');
  });

  it("an untrusted pull request is rendered with the base branch's configuration, read through the API at the branch's SHA", async () => {
    const { pullRequest } = await driver.open({
      files: { '.preview/preview.yaml': previewYaml({ database: false, image: 'registry.example.com/team/api:2.0' }) },
      authorAssociation: 'NONE',
    });
    const base = (await driver.git.resolveRef('refs/heads/main'))!;
    const repositories = freshCache('untrusted');
    const mark = gh.mark();
    const outcome = await renderEnvironment(request(pullRequest.head.sha, pullRequest.number, 'NONE', driver.git), {
      repositories,
      files,
      sandbox,
      sandboxRuns,
    });
    assert.ok(outcome.ok, outcome.ok ? '' : outcome.failure.message);
    assert.deepEqual(outcome.rendered.configSource, { from: 'base', branch: 'main', sha: base });
    assert.equal(outcome.rendered.config.databases?.length, 1, "the base branch's database stays");
    assert.ok(
      outcome.rendered.notes.some((n) => /databases: changes from untrusted pull requests are not applied/.test(n)),
      outcome.rendered.notes.join('\n'),
    );
    assert.deepEqual(
      outcome.rendered.objects.filter((o) => o.kind === 'Algorithm').map((o) => (o.spec as { image: string }).image),
      ['registry.example.com/team/api:2.0'],
      'the image tag is taken',
    );
    assert.deepEqual(Object.fromEntries(repositories.gitCommands), {}, 'no git process');
    assert.ok(operationsSince(mark).includes('git/get-ref'), operationsSince(mark).join(', '));
  });

  it('a commit GitHub does not have is SourceUnavailable, and says it was the GitHub API', async () => {
    const outcome = await renderEnvironment(request('c'.repeat(40), 9, 'MEMBER', driver.git), {
      repositories: freshCache('gone'),
      files,
      sandbox,
      sandboxRuns,
    });
    assert.ok(!outcome.ok && outcome.failure.kind === 'SourceUnavailable', JSON.stringify(outcome));
    assert.match(outcome.failure.message, /commit c{40} is not in render\/.* says the GitHub API/);
  });
});
