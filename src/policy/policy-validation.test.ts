import { test } from 'node:test';
import assert from 'node:assert/strict';
import { PolicyConfigError, resolvePolicyConfig, validatePolicyConfig } from './policy-validation.js';

test('a complete, valid configuration has no issues', () => {
  assert.deepEqual(
    validatePolicyConfig({
      enabled: true,
      filters: {
        labels: { anyOf: ['preview'], allOf: [], exclude: ['no-preview'] },
        skipDrafts: false,
        baseBranches: ['main', 'release/*'],
        authors: { allow: [], deny: ['*[bot]'] },
      },
      trust: { associations: ['OWNER', 'MEMBER'], approvalLabel: 'ok-to-preview' },
      budgets: { ttl: '1h30m', maxTtl: '168h', maxEnvironmentsPerRepository: 5 },
      repositories: { 'acme/shop': { budgets: { maxTtl: null, maxEnvironmentsPerRepository: null } }, 'my-org/app.web': {} },
    }),
    [],
  );
  assert.deepEqual(validatePolicyConfig(undefined), []);
  assert.deepEqual(validatePolicyConfig({}), []);
});

test('every problem is reported, each with its path', () => {
  const issues = validatePolicyConfig({
    enabled: 'yes',
    filters: { labels: { anyOf: ['ok', '', 3] }, skipDraft: true, baseBranches: 'main', authors: { allow: [null] } },
    trust: { associations: ['OWNER', 'ADMIN'], approvalLabel: '' },
    budgets: { ttl: '30s', maxTtl: 7, maxEnvironmentsPerRepository: 0, maxResources: { cpu: 32, pods: 0, gpus: 1 } },
    colour: 'blue',
  });
  assert.deepEqual(
    issues.map((i) => i.path),
    [
      'colour',
      'enabled',
      'filters.skipDraft',
      'filters.labels.anyOf[1]',
      'filters.labels.anyOf[2]',
      'filters.baseBranches',
      'filters.authors.allow[0]',
      'trust.associations[1]',
      'trust.approvalLabel',
      'budgets.ttl',
      'budgets.maxTtl',
      'budgets.maxEnvironmentsPerRepository',
      'budgets.maxResources.gpus',
      'budgets.maxResources.cpu',
      'budgets.maxResources.pods',
    ],
  );
  assert.match(issues.find((i) => i.path === 'budgets.maxResources.cpu')!.message, /Kubernetes quantity such as 32 or 64Gi/);
  assert.match(issues.find((i) => i.path === 'colour')!.message, /unknown field/);
  assert.match(issues.find((i) => i.path === 'trust.associations[1]')!.message, /unknown association/);
  assert.match(issues.find((i) => i.path === 'budgets.ttl')!.message, /at least 1m/);
  assert.match(issues.find((i) => i.path === 'budgets.maxTtl')!.message, /must be a duration such as 72h, not/);
});

test('repository keys and their overrides are checked, with the key in the path', () => {
  const issues = validatePolicyConfig(
    {
      repositories: {
        'not-a-repo': {},
        'acme/shop': { budgets: { ttl: 'forever' }, repositories: {} },
        'ACME/Shop': {},
      },
      basePathCheck: undefined,
    },
    'policy',
  );
  assert.deepEqual(
    issues.map((i) => i.path),
    [
      'policy.basePathCheck',
      'policy.repositories["not-a-repo"]',
      'policy.repositories["acme/shop"].repositories',
      'policy.repositories["acme/shop"].budgets.ttl',
      'policy.repositories["ACME/Shop"]',
    ],
  );
  assert.match(issues.at(-1)!.message, /same repository as "acme\/shop"/);
});

test('filters no pull request could pass are refused, also when only the merge makes them so', () => {
  assert.match(validatePolicyConfig({ filters: { labels: { allOf: ['preview'], exclude: ['Preview'] } } })[0]!.message, /both required/);
  assert.match(validatePolicyConfig({ filters: { labels: { anyOf: ['a'], exclude: ['a'] } } })[0]!.message, /every anyOf label/);
  const issues = validatePolicyConfig({
    filters: { labels: { exclude: ['wip'] } },
    repositories: { 'acme/shop': { filters: { labels: { allOf: ['wip'] } } } },
  });
  assert.deepEqual(
    issues.map((i) => i.path),
    ['repositories["acme/shop"].filters.labels'],
  );
});

test('wrong types are named, not crashed on', () => {
  assert.deepEqual(
    validatePolicyConfig([]).map((i) => i.message),
    ['must be an object, not a list'],
  );
  assert.deepEqual(
    validatePolicyConfig({ repositories: [] }).map((i) => i.path),
    ['repositories'],
  );
  assert.deepEqual(
    validatePolicyConfig({ filters: null }).map((i) => `${i.path}: ${i.message}`),
    ['filters: must be an object, not null'],
  );
  assert.deepEqual(
    validatePolicyConfig({ trust: { approvalLabel: 'x'.repeat(51) } }).map((i) => i.path),
    ['trust.approvalLabel'],
  );
});

test('resolving an invalid configuration throws every issue at once', () => {
  assert.throws(
    () => resolvePolicyConfig({ enabled: 1, budgets: { ttl: '1d' } }),
    (err: unknown) => {
      assert.ok(err instanceof PolicyConfigError);
      assert.deepEqual(
        err.issues.map((i) => i.path),
        ['enabled', 'budgets.ttl'],
      );
      assert.match(err.message, /budgets\.ttl/);
      return true;
    },
  );
});

test('checks.require is none, all or a list of names, with paths', () => {
  assert.deepEqual(
    validatePolicyConfig({ checks: { require: 'all' }, repositories: { 'acme/shop': { checks: { require: ['build'] } } } }),
    [],
  );
  const issues = validatePolicyConfig({
    checks: { require: 'some' },
    repositories: { 'acme/shop': { checks: { require: ['build', ''], wait: true } }, 'acme/blog': { checks: 'all' } },
  });
  assert.deepEqual(
    issues.map((i) => `${i.path}: ${i.message}`),
    [
      'checks.require: must be "none", "all" or a list of check names, not "some"',
      'repositories["acme/shop"].checks.wait: unknown field (expected one of: require)',
      'repositories["acme/shop"].checks.require[1]: must be a non-empty string, not an empty string',
      'repositories["acme/blog"].checks: must be an object, not a string',
    ],
  );
});
