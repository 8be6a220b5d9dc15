// The operator's policy configuration: which pull requests get an environment (filters),
// whose code may run without a maintainer's approval (trust), and the budgets. Settings are
// global with per-repository overrides.
import type { AuthorAssociation } from './pull-request-facts.js';
import { defaultResourceCeilings, type ResourceCeilings } from './resource-ceilings.js';

export interface LabelFilter {
  /** At least one of these labels (case-insensitive). Empty: no constraint. */
  anyOf: string[];
  /** Every one of these labels. Empty: no constraint. */
  allOf: string[];
  /** None of these labels. */
  exclude: string[];
}

export interface AuthorFilter {
  /** Only these logins (globs, case-insensitive, e.g. `*[bot]`). Empty: everyone. */
  allow: string[];
  /** Never these logins (globs, case-insensitive); wins over `allow`. */
  deny: string[];
}

export interface FilterPolicy {
  labels: LabelFilter;
  /** Draft pull requests get no environment (default true). */
  skipDrafts: boolean;
  /** Base branches (globs: `*` within a segment, `**` across, `?` one character). Empty: any branch. */
  baseBranches: string[];
  authors: AuthorFilter;
}

export interface TrustPolicy {
  /** Associations whose pull requests from the repository itself are trusted (default OWNER, MEMBER, COLLABORATOR). */
  associations: AuthorAssociation[];
  /**
   * The label with which a maintainer approves one commit of an untrusted pull request
   * (default `preview-approved`). GitHub lets only people with triage or write access
   * label pull requests, so the label's presence is the maintainer's decision.
   */
  approvalLabel: string;
}

export interface BudgetPolicy {
  /**
   * How long an environment lives after its last deployment when its repository's
   * `.preview/preview.yaml` sets no `ttl` (Go duration, at least 1m; default 72h).
   */
  ttl: string;
  /** The longest TTL a repository may ask for; a longer one (and a longer `ttl` default) is cut to this. `null`: no cap (default). */
  maxTtl: string | null;
  /** Environments one repository may run at once; the rest wait as Queued. `null`: no cap (default). */
  maxEnvironmentsPerRepository: number | null;
  /** The most an environment's ResourceQuota holds; a repository's `resources` above it are cut to it. */
  maxResources: ResourceCeilings;
}

export interface ChecksPolicy {
  /**
   * What must succeed on a head commit before it is deployed (wait for CI): `none` (default),
   * `all` (every check run, check suite and commit status), or these check-run names /
   * status contexts. Until then the previous commit keeps serving.
   */
  require: 'none' | 'all' | string[];
}

/** Everything that can be set globally and overridden per repository. */
export interface PolicySettings {
  /** Whether the repository gets environments at all (default true; false globally + true per repository = an allow-list). */
  enabled: boolean;
  filters: FilterPolicy;
  trust: TrustPolicy;
  budgets: BudgetPolicy;
  checks: ChecksPolicy;
}

/** Overrides of some settings: objects merge field by field, lists and values replace. */
export type PolicyOverrides = {
  enabled?: boolean;
  filters?: {
    labels?: Partial<LabelFilter>;
    skipDrafts?: boolean;
    baseBranches?: string[];
    authors?: Partial<AuthorFilter>;
  };
  trust?: Partial<TrustPolicy>;
  budgets?: Partial<Omit<BudgetPolicy, 'maxResources'>> & { maxResources?: Partial<ResourceCeilings> };
  checks?: Partial<ChecksPolicy>;
};

/** The configuration as written (every field optional); `resolvePolicyConfig` fills the defaults. */
export type PolicyConfigInput = PolicyOverrides & {
  /** Overrides per repository, keyed `owner/name` (case-insensitive, as on GitHub). */
  repositories?: Record<string, PolicyOverrides>;
};

/** The configuration with every default filled in. */
export interface PolicyConfig extends PolicySettings {
  repositories: Record<string, PolicyOverrides>;
}

/** The settings that apply to one repository: the global ones with its overrides applied. */
export interface EffectivePolicy extends PolicySettings {
  /** `owner/name`. */
  repository: string;
}

/** The defaults; read-only by convention (`applyOverrides` copies, never shares, its lists). */
export const defaultPolicySettings: Readonly<PolicySettings> = {
  enabled: true,
  filters: {
    labels: { anyOf: [], allOf: [], exclude: [] },
    skipDrafts: true,
    baseBranches: [],
    authors: { allow: [], deny: [] },
  },
  trust: {
    associations: ['OWNER', 'MEMBER', 'COLLABORATOR'],
    approvalLabel: 'preview-approved',
  },
  budgets: {
    ttl: '72h',
    maxTtl: null,
    maxEnvironmentsPerRepository: null,
    maxResources: defaultResourceCeilings,
  },
  checks: { require: 'none' },
};

/** `base` with `overrides` applied; neither is modified. */
export function applyOverrides(base: PolicySettings, overrides: PolicyOverrides | undefined): PolicySettings {
  const o = overrides ?? {};
  return {
    enabled: o.enabled ?? base.enabled,
    filters: mergeFilters(base.filters, o.filters),
    trust: {
      associations: [...(o.trust?.associations ?? base.trust.associations)],
      approvalLabel: o.trust?.approvalLabel ?? base.trust.approvalLabel,
    },
    budgets: mergeBudgets(base.budgets, o.budgets),
    checks: { require: copyRequire(o.checks?.require ?? base.checks.require) },
  };
}

function mergeFilters(base: FilterPolicy, o: PolicyOverrides['filters']): FilterPolicy {
  return {
    labels: {
      anyOf: [...(o?.labels?.anyOf ?? base.labels.anyOf)],
      allOf: [...(o?.labels?.allOf ?? base.labels.allOf)],
      exclude: [...(o?.labels?.exclude ?? base.labels.exclude)],
    },
    skipDrafts: o?.skipDrafts ?? base.skipDrafts,
    baseBranches: [...(o?.baseBranches ?? base.baseBranches)],
    authors: {
      allow: [...(o?.authors?.allow ?? base.authors.allow)],
      deny: [...(o?.authors?.deny ?? base.authors.deny)],
    },
  };
}

function mergeBudgets(base: BudgetPolicy, o: PolicyOverrides['budgets']): BudgetPolicy {
  return {
    ttl: o?.ttl ?? base.ttl,
    maxTtl: o?.maxTtl !== undefined ? o.maxTtl : base.maxTtl,
    // `null` is a value here (remove a global cap), so only `undefined` inherits.
    maxEnvironmentsPerRepository:
      o?.maxEnvironmentsPerRepository !== undefined ? o.maxEnvironmentsPerRepository : base.maxEnvironmentsPerRepository,
    // Each ceiling on its own: `null` lifts one, an absent one inherits.
    maxResources: { ...base.maxResources, ...withoutUndefined(o?.maxResources ?? {}) },
  };
}

function withoutUndefined<T extends object>(value: T): Partial<T> {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as Partial<T>;
}

function copyRequire(require: ChecksPolicy['require']): ChecksPolicy['require'] {
  return Array.isArray(require) ? [...require] : require;
}

/**
 * The wait-for-CI requirement, in the shape of the checks gate's `ChecksRequirement`
 * (src/github/checks-verdict.ts; declared here because policy imports nothing).
 */
export type ChecksRequirementSetting = { mode: 'none' } | { mode: 'all' } | { mode: 'named'; checks: string[] };

/**
 * The wait-for-CI requirement of a repository:
 * `requirement: (r) => checksRequirement(effectivePolicy(config, r))` for `createChecksGate`.
 */
export function checksRequirement(policy: PolicySettings): ChecksRequirementSetting {
  const require = policy.checks.require;
  if (require === 'all') return { mode: 'all' };
  if (require === 'none' || require.length === 0) return { mode: 'none' };
  return { mode: 'named', checks: [...require] };
}

/** The overrides configured for `owner/name`, whatever the case of the key. */
export function repositoryOverrides(config: PolicyConfig, repository: { owner: string; name: string }): PolicyOverrides | undefined {
  const wanted = `${repository.owner}/${repository.name}`.toLowerCase();
  for (const [key, overrides] of Object.entries(config.repositories)) {
    if (key.toLowerCase() === wanted) return overrides;
  }
  return undefined;
}

/** The settings for one repository. */
export function effectivePolicy(config: PolicyConfig, repository: { owner: string; name: string }): EffectivePolicy {
  return {
    repository: `${repository.owner}/${repository.name}`,
    ...applyOverrides(config, repositoryOverrides(config, repository)),
  };
}
