// Which pull requests want an environment at all: labels, drafts, base branch, author.
import { matchesAnyGlob } from './glob.js';
import type { FilterPolicy } from './policy-config.js';
import type { PullRequestFacts } from './pull-request-facts.js';

export type FilterRule = 'draft' | 'base-branch' | 'labels' | 'author';

export interface FilterRejection {
  rule: FilterRule;
  reason: string;
}

/** Why the filters turn the pull request away, or undefined when it passes them all. */
export function filterRejection(pr: PullRequestFacts, filters: FilterPolicy): FilterRejection | undefined {
  if (pr.draft && filters.skipDrafts) return { rule: 'draft', reason: 'draft pull requests get no environment' };

  if (filters.baseBranches.length > 0 && !matchesAnyGlob(filters.baseBranches, pr.baseRef)) {
    return { rule: 'base-branch', reason: `base branch "${pr.baseRef}" matches none of ${filters.baseBranches.join(', ')}` };
  }

  // Label names are unique per repository regardless of case, so compare folded.
  const labels = new Set(pr.labels.map((l) => l.toLowerCase()));
  const excluded = filters.labels.exclude.find((l) => labels.has(l.toLowerCase()));
  if (excluded !== undefined) return { rule: 'labels', reason: `label "${excluded}" excludes the pull request` };
  const missing = filters.labels.allOf.filter((l) => !labels.has(l.toLowerCase()));
  if (missing.length > 0)
    return { rule: 'labels', reason: `missing required label${missing.length > 1 ? 's' : ''} ${missing.map((l) => `"${l}"`).join(', ')}` };
  if (filters.labels.anyOf.length > 0 && !filters.labels.anyOf.some((l) => labels.has(l.toLowerCase()))) {
    return { rule: 'labels', reason: `needs one of the labels ${filters.labels.anyOf.map((l) => `"${l}"`).join(', ')}` };
  }

  if (matchesAnyGlob(filters.authors.deny, pr.author, { caseInsensitive: true })) {
    return { rule: 'author', reason: `author "${pr.author}" is denied` };
  }
  if (filters.authors.allow.length > 0 && !matchesAnyGlob(filters.authors.allow, pr.author, { caseInsensitive: true })) {
    return { rule: 'author', reason: `author "${pr.author}" is not in the allowed authors` };
  }
  return undefined;
}
