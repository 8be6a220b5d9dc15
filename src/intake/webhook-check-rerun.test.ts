// "Re-run" on the operator's check run (check_run / check_suite `rerequested`): which environments
// are asked to deploy their head commit again, from GitHub's published example payloads.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { webhookExample } from '../../test/github-emulator/webhook-delivery.js';
import type { KubeObject } from '../kube/kube-object.js';
import { environmentName } from './pull-request-environment-name.js';
import { CheckRerunHandler, rerunCooldownMs } from './webhook-check-rerun.js';

const sha = 'c'.repeat(40);
const repository = { owner: 'acme', name: 'shop' };
const at = new Date('2026-03-01T10:00:00Z');

function environment(pullRequest: number, headSha: string): KubeObject {
  return {
    apiVersion: 'preview.alien6.io/v1alpha1',
    kind: 'PreviewEnvironment',
    metadata: { name: environmentName(repository, pullRequest) },
    spec: { repository: { ...repository, cloneUrl: 'x' }, pullRequest: { number: pullRequest, headSha } },
  };
}

function payload(event: 'check_run' | 'check_suite', pullRequests: number[], headSha = sha): Record<string, unknown> {
  const example = webhookExample(event, 'rerequested');
  const object = example[event] as Record<string, unknown>;
  object.head_sha = headSha;
  object.pull_requests = pullRequests.map((number) => ({ number, head: { sha: headSha } }));
  example.repository = { ...(example.repository as object), name: repository.name, owner: { login: repository.owner } };
  return example;
}

function setup(environments?: KubeObject[]) {
  const asked: string[] = [];
  const cache = environments && {
    get: (name: string) => environments.find((e) => e.metadata.name === name),
    list: () => environments,
  };
  const handler = new CheckRerunHandler({ requestRerun: async (name, when) => void asked.push(`${name}@${when}`), environments: cache });
  return { handler, asked };
}

describe('check_run and check_suite rerequested', () => {
  it('asks the environment of the pull request whose head is the commit to deploy it again', () => {
    const { handler, asked } = setup([environment(7, sha)]);
    const outcome = handler.handle('check_run', 'rerequested', payload('check_run', [7]), at);
    assert.deepEqual(outcome, {
      result: 'accepted',
      environment: environmentName(repository, 7),
      reason: `re-running the deploy of ${sha.slice(0, 12)} in ${environmentName(repository, 7)}`,
    });
    assert.deepEqual(asked, [`${environmentName(repository, 7)}@2026-03-01T10:00:00.000Z`]);
  });

  it("finds a fork's pull request (GitHub lists none) by its head commit; check_suite alike", () => {
    const { handler, asked } = setup([environment(8, sha), environment(9, 'd'.repeat(40))]);
    assert.equal(handler.handle('check_suite', 'rerequested', payload('check_suite', []), at).result, 'accepted');
    assert.deepEqual(asked, [`${environmentName(repository, 8)}@2026-03-01T10:00:00.000Z`]);
  });

  it('changes nothing for a commit that is no longer the head, or an action that is not a re-run', () => {
    const { handler, asked } = setup([environment(7, 'e'.repeat(40))]);
    assert.equal(handler.handle('check_run', 'rerequested', payload('check_run', [7]), at).result, 'ignored');
    assert.equal(handler.handle('check_run', 'completed', payload('check_run', [7]), at).result, 'unused');
    assert.deepEqual(asked, []);
  });

  it('without a cache (a webhook-only process), asks the pull requests GitHub names', () => {
    const { handler, asked } = setup();
    handler.handle('check_run', 'rerequested', payload('check_run', [3]), at);
    assert.deepEqual(asked, [`${environmentName(repository, 3)}@2026-03-01T10:00:00.000Z`]);
  });

  it('refuses a payload without a head commit', () => {
    const { handler } = setup();
    const broken = payload('check_run', [3]);
    delete (broken.check_run as Record<string, unknown>).head_sha;
    assert.throws(() => handler.handle('check_run', 'rerequested', broken, at), /check_run: needs repository.owner.login/);
  });
});

describe('a re-run asked for again within the cooldown', () => {
  const later = (ms: number) => new Date(at.getTime() + ms);

  it('is not asked again: a captured delivery replayed under new ids re-runs once a minute at most', () => {
    const { handler, asked } = setup([environment(7, sha)]);
    assert.equal(handler.handle('check_run', 'rerequested', payload('check_run', [7]), at).result, 'accepted');
    for (const ms of [10, 1_000, rerunCooldownMs - 1]) {
      const outcome = handler.handle('check_run', 'rerequested', payload('check_run', [7]), later(ms));
      assert.equal(outcome.result, 'stale');
      assert.match(outcome.reason ?? '', /was asked for in the last 60 s/);
    }
    assert.equal(handler.handle('check_suite', 'rerequested', payload('check_suite', []), later(5_000)).result, 'stale');
    assert.equal(handler.handle('check_run', 'rerequested', payload('check_run', [7]), later(rerunCooldownMs + 1)).result, 'accepted');
    assert.deepEqual(asked, [
      `${environmentName(repository, 7)}@2026-03-01T10:00:00.000Z`,
      `${environmentName(repository, 7)}@2026-03-01T10:01:00.001Z`,
    ]);
  });

  it('by another replica or an earlier process: the cached spec.rerunRequestedAt counts', () => {
    const recent = { ...environment(7, sha) } as KubeObject & { spec: Record<string, unknown> };
    recent.spec = { ...recent.spec, rerunRequestedAt: later(-30_000).toISOString() };
    const { handler, asked } = setup([recent, environment(8, sha)]);
    const outcome = handler.handle('check_suite', 'rerequested', payload('check_suite', [7, 8]), at);
    assert.equal(outcome.result, 'accepted');
    assert.deepEqual(
      asked,
      [`${environmentName(repository, 8)}@2026-03-01T10:00:00.000Z`],
      'only the environment not re-run within the minute',
    );
  });
});
