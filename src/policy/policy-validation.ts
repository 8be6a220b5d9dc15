// Validation of the policy configuration as the operator's config loader reads it (parsed
// YAML/JSON, so `unknown`): every problem is reported at once, each with its path, so a
// user fixes the file in one go.
import { ttlProblem } from './budgets.js';
import { ceilingProblem, type ResourceCeilings } from './resource-ceilings.js';
import {
  applyOverrides,
  defaultPolicySettings,
  type PolicyConfig,
  type PolicyConfigInput,
  type PolicyOverrides,
  type PolicySettings,
} from './policy-config.js';
import { authorAssociations } from './pull-request-facts.js';

export interface ConfigIssue {
  /** Where, e.g. `repositories["acme/shop"].filters.labels.anyOf[1]`. */
  path: string;
  message: string;
}

export class PolicyConfigError extends Error {
  constructor(readonly issues: ConfigIssue[]) {
    super(`invalid policy configuration:\n${issues.map((i) => `  ${i.path || '(root)'}: ${i.message}`).join('\n')}`);
    this.name = 'PolicyConfigError';
  }
}

/** GitHub refuses label names longer than this. */
const maxLabelLength = 50;
const repositoryKey = /^[A-Za-z0-9](-?[A-Za-z0-9])*\/[A-Za-z0-9._-]+$/;

type Issues = ConfigIssue[];

function at(path: string, key: string | number): string {
  if (typeof key === 'number') return `${path}[${key}]`;
  if (/^[A-Za-z_][A-Za-z0-9_]*$/.test(key)) return path ? `${path}.${key}` : key;
  return `${path}[${JSON.stringify(key)}]`;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function describe(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'a list';
  return `a ${typeof value}`;
}

/** Checks that `value` is an object with only `allowed` keys; returns it when it is one. */
function object(value: unknown, path: string, allowed: readonly string[], issues: Issues): Record<string, unknown> | undefined {
  if (!isObject(value)) {
    issues.push({ path, message: `must be an object, not ${describe(value)}` });
    return undefined;
  }
  for (const key of Object.keys(value)) {
    if (!allowed.includes(key)) issues.push({ path: at(path, key), message: `unknown field (expected one of: ${allowed.join(', ')})` });
  }
  return value;
}

function boolean(value: unknown, path: string, issues: Issues): void {
  if (value !== undefined && typeof value !== 'boolean') issues.push({ path, message: `must be true or false, not ${describe(value)}` });
}

function stringList(value: unknown, path: string, issues: Issues, check?: (item: string) => string | undefined): void {
  if (value === undefined) return;
  if (!Array.isArray(value)) {
    issues.push({ path, message: `must be a list of strings, not ${describe(value)}` });
    return;
  }
  value.forEach((item, i) => {
    if (typeof item !== 'string' || item.length === 0) {
      issues.push({
        path: at(path, i),
        message: `must be a non-empty string, not ${typeof item === 'string' ? 'an empty string' : describe(item)}`,
      });
      return;
    }
    const problem = check?.(item);
    if (problem) issues.push({ path: at(path, i), message: problem });
  });
}

const labelCheck = (label: string) =>
  label.length > maxLabelLength ? `GitHub label names have at most ${maxLabelLength} characters` : undefined;

const overrideFields = ['enabled', 'filters', 'trust', 'budgets', 'checks'] as const;

function validateOverrides(value: unknown, path: string, issues: Issues): void {
  const root = object(value, path, overrideFields, issues);
  if (root) validateOverrideFields(root, path, issues);
}

function validateOverrideFields(root: Record<string, unknown>, path: string, issues: Issues): void {
  boolean(root.enabled, at(path, 'enabled'), issues);
  if (root.filters !== undefined) validateFilters(root.filters, at(path, 'filters'), issues);
  if (root.trust !== undefined) validateTrust(root.trust, at(path, 'trust'), issues);
  if (root.budgets !== undefined) validateBudgets(root.budgets, at(path, 'budgets'), issues);
  if (root.checks !== undefined) validateChecks(root.checks, at(path, 'checks'), issues);
}

function validateFilters(value: unknown, path: string, issues: Issues): void {
  const filters = object(value, path, ['labels', 'skipDrafts', 'baseBranches', 'authors'], issues);
  if (!filters) return;
  if (filters.labels !== undefined) {
    const lpath = at(path, 'labels');
    const labels = object(filters.labels, lpath, ['anyOf', 'allOf', 'exclude'], issues);
    if (labels) for (const key of ['anyOf', 'allOf', 'exclude']) stringList(labels[key], at(lpath, key), issues, labelCheck);
  }
  boolean(filters.skipDrafts, at(path, 'skipDrafts'), issues);
  stringList(filters.baseBranches, at(path, 'baseBranches'), issues);
  if (filters.authors !== undefined) {
    const apath = at(path, 'authors');
    const authors = object(filters.authors, apath, ['allow', 'deny'], issues);
    if (authors) for (const key of ['allow', 'deny']) stringList(authors[key], at(apath, key), issues);
  }
}

const associationCheck = (association: string) =>
  (authorAssociations as readonly string[]).includes(association)
    ? undefined
    : `unknown association (expected one of: ${authorAssociations.join(', ')})`;

function validateTrust(value: unknown, path: string, issues: Issues): void {
  const trust = object(value, path, ['associations', 'approvalLabel'], issues);
  if (!trust) return;
  stringList(trust.associations, at(path, 'associations'), issues, associationCheck);
  if (trust.approvalLabel === undefined) return;
  const problem =
    typeof trust.approvalLabel !== 'string' || trust.approvalLabel.trim() === ''
      ? 'must be a non-empty label name'
      : labelCheck(trust.approvalLabel);
  if (problem) issues.push({ path: at(path, 'approvalLabel'), message: problem });
}

function validateBudgets(value: unknown, path: string, issues: Issues): void {
  const budgets = object(value, path, ['ttl', 'maxTtl', 'maxEnvironmentsPerRepository', 'maxResources'], issues);
  if (!budgets) return;
  for (const key of ['ttl', 'maxTtl'] as const) {
    const ttl = budgets[key];
    // `maxTtl: null` lifts a cap set globally.
    if (ttl === undefined || (key === 'maxTtl' && ttl === null)) continue;
    const problem = typeof ttl === 'string' ? ttlProblem(ttl) : `must be a duration such as 72h, not ${describe(ttl)}`;
    if (problem) issues.push({ path: at(path, key), message: problem });
  }
  const cap = budgets.maxEnvironmentsPerRepository;
  if (cap !== undefined && cap !== null && !(typeof cap === 'number' && Number.isInteger(cap) && cap >= 1)) {
    issues.push({ path: at(path, 'maxEnvironmentsPerRepository'), message: 'must be a whole number of at least 1, or null for no cap' });
  }
  if (budgets.maxResources === undefined) return;
  const ceilingKeys: (keyof ResourceCeilings)[] = ['cpu', 'memory', 'storage', 'pods', 'gpu'];
  const ceilings = object(budgets.maxResources, at(path, 'maxResources'), ceilingKeys, issues);
  for (const key of ceilingKeys) {
    const problem = ceilings?.[key] === undefined ? undefined : ceilingProblem(key, ceilings[key]);
    if (problem) issues.push({ path: at(at(path, 'maxResources'), key), message: problem });
  }
}

function validateChecks(value: unknown, path: string, issues: Issues): void {
  const checks = object(value, path, ['require'], issues);
  const require = checks?.require;
  if (require === undefined || require === 'none' || require === 'all') return;
  if (Array.isArray(require)) {
    stringList(require, at(path, 'require'), issues);
  } else {
    const shown = typeof require === 'string' ? JSON.stringify(require) : describe(require);
    issues.push({ path: at(path, 'require'), message: `must be "none", "all" or a list of check names, not ${shown}` });
  }
}

/** Contradictions only visible once overrides are merged: filters that no pull request can pass. */
function validateSettings(settings: PolicySettings, path: string, issues: Issues): void {
  const lpath = at(at(path, 'filters'), 'labels');
  const excluded = new Set(settings.filters.labels.exclude.map((l) => l.toLowerCase()));
  for (const label of settings.filters.labels.allOf) {
    if (excluded.has(label.toLowerCase())) {
      issues.push({ path: lpath, message: `label "${label}" is both required (allOf) and excluded: no pull request can pass` });
    }
  }
  const anyOf = settings.filters.labels.anyOf;
  if (anyOf.length > 0 && anyOf.every((l) => excluded.has(l.toLowerCase()))) {
    issues.push({ path: lpath, message: 'every anyOf label is also excluded: no pull request can pass' });
  }
}

/** Every problem of a policy configuration (empty when it is valid). `basePath` prefixes each path. */
export function validatePolicyConfig(value: unknown, basePath = ''): ConfigIssue[] {
  const issues: Issues = [];
  if (value === undefined || value === null) return issues;
  const root = object(value, basePath, [...overrideFields, 'repositories'], issues);
  if (!root) return issues;
  const { repositories, ...globalPart } = root;
  validateOverrideFields(globalPart, basePath, issues);
  // Merged settings are only checked when the parts they merge are valid.
  const global = issues.length === 0 ? applyOverrides(defaultPolicySettings, globalPart as PolicyOverrides) : undefined;
  if (global) validateSettings(global, basePath, issues);

  if (repositories !== undefined) {
    const rpath = at(basePath, 'repositories');
    if (!isObject(repositories)) {
      issues.push({ path: rpath, message: `must be an object keyed "owner/name", not ${describe(repositories)}` });
      return issues;
    }
    const seen = new Map<string, string>();
    for (const [key, overrides] of Object.entries(repositories)) {
      const path = at(rpath, key);
      const [owner = '', name = ''] = key.split('/');
      if (!repositoryKey.test(key) || owner.length > 39 || name.length > 100) {
        issues.push({ path, message: 'must be keyed by a repository as "owner/name"' });
        continue;
      }
      const folded = key.toLowerCase();
      const earlier = seen.get(folded);
      if (earlier !== undefined) issues.push({ path, message: `the same repository as "${earlier}" (names are case-insensitive)` });
      seen.set(folded, key);
      const before = issues.length;
      validateOverrides(overrides, path, issues);
      if (global && issues.length === before) validateSettings(applyOverrides(global, overrides as PolicyOverrides), path, issues);
    }
  }
  return issues;
}

/** The configuration with defaults filled in; throws `PolicyConfigError` listing every problem. */
export function resolvePolicyConfig(input?: unknown): PolicyConfig {
  const issues = validatePolicyConfig(input);
  if (issues.length > 0) throw new PolicyConfigError(issues);
  const { repositories = {}, ...global } = (input ?? {}) as PolicyConfigInput;
  return { ...applyOverrides(defaultPolicySettings, global), repositories: structuredClone(repositories) };
}
