import { test } from 'node:test';
import assert from 'node:assert/strict';
import { chaosTable, chaosVerdict, inFlightAtRefusal, type ObservedPullRequest } from './chaos-verdict.js';

const sha = (c: string) => c.repeat(40);
const pr = (n: number, open: boolean, extra: Partial<ObservedPullRequest> = {}): ObservedPullRequest => ({
  key: `acme/shop#${n}`,
  environment: `pr-${n}-shop`,
  open,
  headSha: sha(String(n)),
  comments: 1,
  deploymentsBySha: { [sha(String(n))]: 1 },
  ...extra,
});

test('converged: every open PR Ready at its head, nothing of a closed PR left, one comment and one Deployment each', () => {
  const verdict = chaosVerdict({
    pullRequests: [pr(1, true), pr(2, false)],
    environments: [{ name: 'pr-1-shop', headSha: sha('1'), deployedSha: sha('1'), phase: 'Ready' }],
    namespaces: ['pr-1-shop'],
  });
  assert.deepEqual(verdict, {
    missing: [],
    leaked: [],
    extraComments: [],
    extraDeployments: [],
    maxComments: 1,
    maxDeploymentsPerSha: 1,
    converged: true,
  });
});

test("not converged: a PR deployed at an older commit, a closed PR's namespace, duplicates named", () => {
  const verdict = chaosVerdict({
    pullRequests: [pr(1, true, { headSha: sha('9'), comments: 2 }), pr(2, false, { deploymentsBySha: { [sha('2')]: 3 } }), pr(3, true)],
    environments: [
      { name: 'pr-1-shop', headSha: sha('9'), deployedSha: sha('1'), phase: 'Deploying' },
      { name: 'pr-3-shop', headSha: sha('3'), deployedSha: sha('3'), phase: 'Ready' },
      { name: 'pr-7-shop', phase: 'Ready' },
    ],
    namespaces: ['pr-1-shop', 'pr-2-shop', 'pr-3-shop'],
  });
  assert.deepEqual(verdict.missing, ['acme/shop#1']);
  assert.deepEqual(verdict.leaked, ['pr-2-shop', 'pr-7-shop']);
  assert.deepEqual(verdict.extraComments, ['acme/shop#1 (2)']);
  assert.deepEqual(verdict.extraDeployments, ['acme/shop#2@2222222 (3)']);
  assert.deepEqual([verdict.maxComments, verdict.maxDeploymentsPerSha, verdict.converged], [2, 3, false]);
});

test('the table names each measure, and says when the run did not converge', () => {
  const verdict = chaosVerdict({ pullRequests: [pr(1, true)], environments: [], namespaces: [] });
  const rows = chaosTable(
    {
      kills: 4,
      exits: 0,
      apiServerRestarts: 1,
      githubFaults: { 'lost-answer': 6, 'server-error': 4 },
      deliveriesSent: 49,
      deliveriesAnswered: 49,
      deliveriesLost: 0,
      deliveriesCutByKill: 0,
      webhooksMissed: 3,
      forbiddenWrites: 0,
      teardownWrites: 80,
      githubViolations: 2,
      githubViolationsInFlight: 2,
      convergeMs: undefined,
    },
    verdict,
    24,
  );
  assert.equal(rows[0], '| | |');
  assert.ok(rows.includes('| kill -9 of a replica | 4 |'));
  assert.ok(rows.includes('| GitHub faults injected | 6 lost-answer, 4 server-error |'));
  assert.ok(rows.includes('| missing environments | 1: acme/shop#1 |'));
  assert.ok(rows.includes('| time to converge | did not converge |'));
  assert.ok(rows.includes('| GitHub rule violations | 2 (2 sent within 0.5 s of a refusal, before it could be read) |'));
});

test('a request inside a retry-after wait: in flight when sent before the refusal could be read, ignored the wait when later', () => {
  const message = (ms: number, wait: number) => `request sent ${ms} ms before the end of the wait GitHub asked for (retry-after: ${wait})`;
  assert.equal(inFlightAtRefusal(message(998, 1)), true);
  assert.equal(inFlightAtRefusal(message(1761, 2)), true, '239 ms: the refusal was not read yet on a loaded machine');
  assert.equal(inFlightAtRefusal(message(400, 1)), false, '0.6 s after the refusal: the wait was ignored');
  assert.equal(inFlightAtRefusal('response 200 body: /0/account must be null'), false);
});
