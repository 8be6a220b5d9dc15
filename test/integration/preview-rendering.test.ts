// The rendering pipeline without a cluster: a real repository over file://, the example
// repository's `.preview/` (preview.yaml plus main.ts run in the sandbox), the policy, and the
// namespace guards taken from the operator's own rendering whatever main.ts does to them.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import type { PreviewEnvironmentSpec } from '../../constructs/index.js';
import { renderEnvironment, type RenderRequest } from '../../src/controllers/preview-environment-rendering.js';
import { RepositoryCache } from '../../src/git/repository-cache.js';
import { Semaphore } from '../../src/git/semaphore.js';
import { defaultPolicySettings } from '../../src/policy/policy-config.js';
import { AllowedKinds } from '../../src/synth/policy-allowed-kinds.js';
import { Sandbox } from '../../src/synth/sandbox.js';
import { createGitRepository, type GitRepository } from '../support/git-repository.js';

const example = (file: string) => readFileSync(fileURLToPath(new URL(`../../examples/repository/.preview/${file}`, import.meta.url)), 'utf8');

let repository: GitRepository;
let cacheDir: string;
let repositories: RepositoryCache;
const sandbox = new Sandbox({ timeoutMs: 15_000 });
const sandboxRuns = new Semaphore(2);

before(async () => {
  repository = await createGitRepository({ repo: 'reco', initialFiles: { '.preview/preview.yaml': example('preview.yaml') } });
  cacheDir = await mkdtemp(path.join(tmpdir(), 'preview-render-'));
  repositories = new RepositoryCache({ cacheDir, allowedProtocols: ['file:'] });
});
after(async () => {
  await repository?.cleanup();
  if (cacheDir) await rm(cacheDir, { recursive: true, force: true });
});

function request(headSha: string, pullRequest: number, authorAssociation: 'MEMBER' | 'NONE' = 'MEMBER'): RenderRequest {
  const spec: PreviewEnvironmentSpec = {
    repository: { owner: repository.owner, name: repository.repo, cloneUrl: repository.cloneUrl },
    pullRequest: { number: pullRequest, headSha, headRef: `feature-${pullRequest}`, baseRef: 'main', authorAssociation },
  };
  return {
    name: `pr-${pullRequest}-reco`,
    spec,
    settings: { domain: 'preview.example.com', ingressClassName: 'nginx', tls: { issuer: { name: 'preview-issuer', kind: 'ClusterIssuer' } }, podSecurity: 'restricted' },
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
    assert.equal(rendered.url, 'https://reco-pr-1.preview.example.com');
    assert.equal(rendered.namespace.metadata.name, 'pr-1-reco');
    const objects = rendered.objects.map((o) => `${o.kind}/${o.metadata.name}`).sort();
    assert.deepEqual(objects, [
      'Algorithm/ranking-api', 'Algorithm/ranking-worker', 'Algorithm/recommendation-engine',
      'Certificate/preview-tls', 'ConfigMap/ranking-api-env', 'ConfigMap/ranking-fixtures', 'ConfigMap/ranking-worker-env',
      'ConfigMap/recommendation-engine-env', 'Database/myapp-db', 'Ingress/preview', 'LimitRange/preview-defaults',
      'NetworkPolicy/preview-isolation', 'ResourceQuota/preview-quota',
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
    assert.ok(outcomes.every((o) => o.ok && o.rendered.renderer === 'sandbox'), JSON.stringify(outcomes.map((o) => (o.ok ? 'ok' : o.failure.message))));
    assert.equal(most, 1, 'three renders at once, one sandbox process at a time');
  });

  it('a main.ts that loosens the namespace\'s quota and isolation changes nothing of them', async () => {
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
