import { test } from 'node:test';
import assert from 'node:assert/strict';
import { applyOverrides, checksRequirement, defaultPolicySettings, effectivePolicy } from './policy-config.js';
import { resolvePolicyConfig } from './policy-validation.js';

test('the defaults: enabled, drafts skipped, OWNER/MEMBER/COLLABORATOR trusted, preview-approved, 72h, no cap', () => {
  const config = resolvePolicyConfig();
  assert.deepEqual(config, {
    ...structuredClone(defaultPolicySettings),
    repositories: {},
  });
  assert.equal(config.enabled, true);
  assert.equal(config.filters.skipDrafts, true);
  assert.deepEqual(config.trust.associations, ['OWNER', 'MEMBER', 'COLLABORATOR']);
  assert.equal(config.trust.approvalLabel, 'preview-approved');
  assert.equal(config.budgets.ttl, '72h');
  assert.equal(config.budgets.maxEnvironmentsPerRepository, null);
});

test('repository overrides merge field by field; lists replace rather than append', () => {
  const config = resolvePolicyConfig({
    filters: { labels: { anyOf: ['preview'], exclude: ['wip'] }, baseBranches: ['main'] },
    trust: { approvalLabel: 'ok-to-preview' },
    budgets: { maxEnvironmentsPerRepository: 3, maxResources: { cpu: '16', gpu: 2 } },
    repositories: {
      'Acme/Shop': {
        filters: { labels: { anyOf: ['deploy'] }, skipDrafts: false },
        budgets: { ttl: '24h', maxEnvironmentsPerRepository: null, maxResources: { gpu: null, memory: '128Gi' } },
      },
    },
  });
  const shop = effectivePolicy(config, { owner: 'acme', name: 'shop' });
  assert.equal(shop.repository, 'acme/shop');
  assert.deepEqual(shop.filters.labels, { anyOf: ['deploy'], allOf: [], exclude: ['wip'] });
  assert.equal(shop.filters.skipDrafts, false);
  assert.deepEqual(shop.filters.baseBranches, ['main']);
  assert.equal(shop.trust.approvalLabel, 'ok-to-preview');
  assert.deepEqual(
    shop.budgets,
    {
      ttl: '24h',
      maxTtl: null,
      maxEnvironmentsPerRepository: null,
      // Ceiling by ceiling: the global cpu, the repository's memory, null lifting the global GPU ceiling.
      maxResources: { cpu: '16', memory: '128Gi', storage: '500Gi', pods: 200, gpu: null },
    },
    'null removes the global cap',
  );

  const other = effectivePolicy(config, { owner: 'acme', name: 'blog' });
  assert.deepEqual(other.filters.labels.anyOf, ['preview']);
  assert.equal(other.budgets.maxEnvironmentsPerRepository, 3);
  assert.equal(other.filters.skipDrafts, true);
});

test('disabled globally and enabled per repository is an allow-list', () => {
  const config = resolvePolicyConfig({ enabled: false, repositories: { 'acme/shop': { enabled: true } } });
  assert.equal(effectivePolicy(config, { owner: 'acme', name: 'shop' }).enabled, true);
  assert.equal(effectivePolicy(config, { owner: 'acme', name: 'blog' }).enabled, false);
});

test('applying overrides never changes the defaults or the base', () => {
  const merged = applyOverrides(defaultPolicySettings, {});
  merged.filters.labels.anyOf.push('x');
  merged.trust.associations.push('NONE');
  assert.deepEqual(defaultPolicySettings.filters.labels.anyOf, []);
  assert.deepEqual(defaultPolicySettings.trust.associations, ['OWNER', 'MEMBER', 'COLLABORATOR']);
});

test('wait for CI: none by default, set globally, overridden per repository, mapped for the checks gate', () => {
  const config = resolvePolicyConfig({
    checks: { require: ['build', 'test'] },
    repositories: { 'acme/shop': { checks: { require: 'all' } }, 'acme/docs': { checks: { require: 'none' } } },
  });
  assert.deepEqual(checksRequirement(resolvePolicyConfig({})), { mode: 'none' });
  assert.deepEqual(checksRequirement(effectivePolicy(config, { owner: 'acme', name: 'blog' })), {
    mode: 'named',
    checks: ['build', 'test'],
  });
  assert.deepEqual(checksRequirement(effectivePolicy(config, { owner: 'ACME', name: 'Shop' })), { mode: 'all' });
  assert.deepEqual(checksRequirement(effectivePolicy(config, { owner: 'acme', name: 'docs' })), { mode: 'none' });
  assert.deepEqual(checksRequirement(resolvePolicyConfig({ checks: { require: [] } })), { mode: 'none' });
});
