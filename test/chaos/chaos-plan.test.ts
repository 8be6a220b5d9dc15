import { test } from 'node:test';
import assert from 'node:assert/strict';
import { chaosPlan, defaultChaosOptions, faultCatalogue, seededRandom, type ChaosAction } from './chaos-plan.js';

const count = (plan: ChaosAction[], kind: ChaosAction['kind']) => plan.filter((a) => a.kind === kind).length;

test('the default plan: every pull request opened, two in three pushed, one in two closed, in three phases', () => {
  const plan = chaosPlan(defaultChaosOptions);
  assert.deepEqual(
    [
      count(plan, 'open'),
      count(plan, 'push'),
      count(plan, 'close'),
      count(plan, 'kill'),
      count(plan, 'restart-api-server'),
      count(plan, 'github-fault'),
    ],
    [24, 16, 12, 4, 1, 8],
  );
  const phases = (kind: ChaosAction['kind']) => plan.filter((a) => a.kind === kind).map((a) => a.at);
  assert.ok(Math.max(...phases('open')) < Math.min(...phases('push')), 'pushes after every open');
  assert.ok(Math.max(...phases('push')) < Math.min(...phases('close')), 'closes after every push');
  assert.deepEqual(
    plan.map((a) => a.at),
    [...plan.map((a) => a.at)].sort((a, b) => a - b),
    'in time order',
  );
  const kills = plan.filter((a): a is Extract<ChaosAction, { kind: 'kill' }> => a.kind === 'kill').map((a) => a.target);
  assert.deepEqual(kills.sort(), ['follower', 'follower', 'leader', 'leader']);
});

test('missed webhooks: as many as asked, at most one per pull request; the rest are delivered', () => {
  const plan = chaosPlan({ ...defaultChaosOptions, missedWebhooks: 5 });
  const missed = plan.filter((a) => 'deliver' in a && !a.deliver);
  assert.equal(missed.length, 5);
  const keys = missed.map((a) => ('pullRequest' in a ? `${a.pullRequest.repository}/${a.pullRequest.number}` : ''));
  assert.equal(new Set(keys).size, 5);
});

test('the same seed gives the same plan; another seed, another', () => {
  assert.deepEqual(chaosPlan(defaultChaosOptions), chaosPlan(defaultChaosOptions));
  assert.notDeepEqual(chaosPlan(defaultChaosOptions), chaosPlan({ ...defaultChaosOptions, seed: 2 }));
  const random = seededRandom(7);
  const values = Array.from({ length: 1000 }, random);
  assert.ok(values.every((v) => v >= 0 && v < 1));
});

test('faults are armed as the opens and the pushes start, the lost answers on the creates first', () => {
  const plan = chaosPlan({ ...defaultChaosOptions, githubFaults: 3 });
  const faults = plan.filter((a): a is Extract<ChaosAction, { kind: 'github-fault' }> => a.kind === 'github-fault');
  assert.deepEqual(
    faults.map((f) => f.spec.route),
    ['issues/create-comment', 'checks/create', 'repos/create-deployment'],
  );
  assert.ok(faults.every((f) => f.spec.fault.kind === 'lost-answer'));
  assert.deepEqual(
    faults.map((f) => f.at),
    [0, 0, defaultChaosOptions.phaseMs],
    'as the opens and the pushes start',
  );
  assert.equal(faultCatalogue.length, 8);
});

test('a teardown: every pull request closed', () => {
  const plan = chaosPlan({ ...defaultChaosOptions, closeAll: true, kills: 0, apiServerRestarts: 0, githubFaults: 0, missedWebhooks: 0 });
  assert.deepEqual([count(plan, 'open'), count(plan, 'close'), count(plan, 'kill'), count(plan, 'github-fault')], [24, 24, 0, 0]);
  assert.ok(
    plan.every((a) => !('deliver' in a) || a.deliver),
    'every webhook sent',
  );
});
