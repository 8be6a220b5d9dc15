// The label remover against the GitHub emulator over HTTP (OpenAPI-checked): the label is
// gone afterwards, "already gone" resolves, and a failure GitHub keeps answering rejects so
// the ApprovalRevoker retries.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { startTestEmulator } from '../../../test/github-emulator/test-emulator.js';
import { ApprovalRevoker } from './approval-revoker.js';
import { createLabelRemover } from './label-remover.js';
import { createGitHubClients } from '../octokit-factory.js';

const gh = await startTestEmulator();
const sha = (c: string) => c.repeat(40);

function repositoryWithLabeledPull(name: string, labels: string[]) {
  const repo = gh.createRepository({ owner: 'acme', name });
  gh.openPullRequest(repo, {
    number: 3,
    author: 'mallory',
    authorAssociation: 'CONTRIBUTOR',
    head: { ref: 'patch-3', sha: sha('a') },
    labels,
  });
  return repo;
}

describe('createLabelRemover', () => {
  it('removes the label with one DELETE as the installation of the repository, and 404 (already gone) resolves', async () => {
    const repo = repositoryWithLabeledPull('labels-app', ['preview-approved', 'bug']);
    const app = gh.createApp();
    gh.installApp(app.id, [repo]);
    const remove = createLabelRemover(
      createGitHubClients({ auth: { type: 'app', appId: app.id, privateKey: app.privateKey }, baseUrl: gh.url }),
    );
    const mark = gh.mark();
    await remove('acme', 'labels-app', 3, 'Preview-Approved');
    assert.deepEqual(
      gh.pullRequest(repo, 3).labels.map((l) => l.name),
      ['bug'],
    );
    const deletes = gh.requestsSince(mark, { operationId: 'issues/remove-label' });
    assert.deepEqual(
      deletes.map((r) => [r.method, r.path, r.status, r.identity?.split(':')[0]]),
      [['DELETE', '/repos/acme/labels-app/issues/3/labels/Preview-Approved', 200, 'installation']],
    );
    await remove('acme', 'labels-app', 3, 'preview-approved');
    assert.equal(gh.requestsSince(mark, { operationId: 'issues/remove-label' }).at(-1)?.status, 404);
  });

  it('rejects while GitHub fails, so the revoker retries until the label is gone', async () => {
    const repo = repositoryWithLabeledPull('labels-token', ['preview-approved']);
    const remove = createLabelRemover(
      createGitHubClients({
        auth: { type: 'token', token: gh.createToken('operator') },
        baseUrl: gh.url,
        retry: { enabled: false },
        throttle: { enabled: false },
      }),
    );
    gh.faults.inject({ route: 'issues/remove-label', repository: repo, times: 2, fault: { kind: 'server-error', status: 502 } });
    await assert.rejects(remove('acme', 'labels-token', 3, 'preview-approved'), { status: 502 });
    const revoker = new ApprovalRevoker({ removeLabel: remove, initialDelayMs: 10 });
    revoker.revoke({ owner: 'acme', repo: 'labels-token', number: 3, label: 'preview-approved' });
    await revoker.idle();
    assert.equal(revoker.failures, 0);
    assert.deepEqual(gh.pullRequest(repo, 3).labels, []);
  });
});
