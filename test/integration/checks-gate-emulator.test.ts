// The wait-for-CI gate against the GitHub emulator over HTTP: check runs by a CI App,
// commit statuses and check suites as GitHub reports them, every request OpenAPI-checked.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createChecksGate, type ChecksRequirement } from '../../src/github/checks-gate.js';
import { createGitHubClients } from '../../src/github/octokit-factory.js';
import { startTestEmulator } from '../github-emulator/test-emulator.js';

const gh = await startTestEmulator();
const sha = (c: string) => c.repeat(40);
let count = 0;

function setup(requirement: ChecksRequirement) {
  const repo = gh.createRepository({ owner: 'acme', name: `ci-${++count}` });
  gh.openPullRequest(repo, { number: 1, author: 'alice', head: { ref: 'feature-1', sha: sha('c') } });
  const app = gh.createApp({ slug: `preview-operator-${count}` });
  gh.installApp(app.id, [repo]);
  const clients = createGitHubClients({ auth: { type: 'app', appId: app.id, privateKey: app.privateKey }, baseUrl: gh.url });
  return { repo, gate: createChecksGate({ clients, requirement: () => requirement }), clients };
}

describe('checks gate, named checks', () => {
  it('pending while a required check runs, passed after it succeeded; unchanged answers are 304s', async () => {
    const { repo, gate } = setup({ mode: 'named', checks: ['build', 'ci/test'] });
    const head = sha('c');
    let verdict = await gate.state(repo, head);
    assert.deepEqual([verdict.state, verdict.pending], ['pending', ['build', 'ci/test']], 'nothing reported yet: wait');

    const build = gh.addCheckRun(repo, { headSha: head, name: 'build', status: 'in_progress' });
    gh.addCommitStatus(repo, { sha: head, context: 'ci/test', state: 'success' });
    verdict = await gate.state(repo, head);
    assert.deepEqual([verdict.state, verdict.pending, verdict.passed], ['pending', ['build'], ['ci/test']]);
    assert.equal(verdict.message, 'waiting for build');

    const mark = gh.mark();
    assert.equal((await gate.state(repo, head)).state, 'pending');
    assert.deepEqual(
      gh.requestsSince(mark).map((r) => r.status),
      [304, 304],
      'polling an unchanged commit: two conditional GETs, both 304',
    );

    build.status = 'completed';
    build.conclusion = 'success';
    verdict = await gate.state(repo, head);
    assert.deepEqual([verdict.state, verdict.passed], ['passed', ['build', 'ci/test']]);
  });

  it('failed when a required check fails, naming it; a check not required does not matter', async () => {
    const { repo, gate } = setup({ mode: 'named', checks: ['build'] });
    gh.addCheckRun(repo, { headSha: sha('c'), name: 'build', conclusion: 'failure' });
    gh.addCheckRun(repo, { headSha: sha('c'), name: 'lint', status: 'in_progress' });
    const verdict = await gate.state(repo, sha('c'));
    assert.deepEqual([verdict.state, verdict.failing, verdict.message], ['failed', ['build'], 'checks failed: build']);
  });

  it('a re-run that succeeds replaces the failed attempt', async () => {
    const { repo, gate } = setup({ mode: 'named', checks: ['build'] });
    gh.addCheckRun(repo, { headSha: sha('c'), name: 'build', conclusion: 'failure' });
    assert.equal((await gate.state(repo, sha('c'))).state, 'failed');
    gh.addCheckRun(repo, { headSha: sha('c'), name: 'build', conclusion: 'success' });
    assert.equal((await gate.state(repo, sha('c'))).state, 'passed');
  });
});

describe('checks gate, all checks', () => {
  it("waits for every suite, run and status but not for the operator's own check run", async () => {
    const { repo, gate, clients } = setup({ mode: 'all' });
    const head = sha('c');
    // The operator's own check run, created by its App as the reporter does.
    const own = await clients.forRepository(repo);
    await own.rest.checks.create({ owner: repo.owner, repo: repo.name, name: 'preview-operator', head_sha: head, status: 'in_progress' });
    const lint = gh.addCheckRun(repo, { headSha: head, name: 'lint', status: 'queued' });
    gh.addCommitStatus(repo, { sha: head, context: 'legacy/ci', state: 'pending' });

    const mark = gh.mark();
    let verdict = await gate.state(repo, head);
    assert.deepEqual([verdict.state, verdict.pending], ['pending', ['legacy/ci', 'lint']]);
    assert.deepEqual(
      gh
        .requestsSince(mark)
        .map((r) => r.operationId)
        .sort(),
      ['checks/list-for-ref', 'checks/list-suites-for-ref', 'repos/get-combined-status-for-ref'],
    );

    lint.status = 'completed';
    lint.conclusion = 'success';
    gh.addCommitStatus(repo, { sha: head, context: 'legacy/ci', state: 'success' });
    verdict = await gate.state(repo, head);
    assert.deepEqual([verdict.state, verdict.passed], ['passed', ['legacy/ci', 'lint']]);

    gh.addCommitStatus(repo, { sha: head, context: 'legacy/ci', state: 'failure' });
    assert.deepEqual((await gate.state(repo, head)).failing, ['legacy/ci']);
  });

  it('no requirement: passed without asking GitHub', async () => {
    const { repo, gate } = setup({ mode: 'none' });
    const mark = gh.mark();
    assert.equal((await gate.state(repo, sha('c'))).state, 'passed');
    assert.equal(gh.requestsSince(mark).length, 0);
  });
});
