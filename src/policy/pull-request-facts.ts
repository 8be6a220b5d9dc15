// What the operator knows about a pull request when it decides whether it gets an environment.
// Built from a webhook payload or from the REST API (the resync), so both paths decide alike.

/** GitHub's `author_association`, as the CRD's `spec.pullRequest.authorAssociation` enumerates it. */
export type AuthorAssociation =
  'OWNER' | 'MEMBER' | 'COLLABORATOR' | 'CONTRIBUTOR' | 'FIRST_TIME_CONTRIBUTOR' | 'FIRST_TIMER' | 'MANNEQUIN' | 'NONE';

export const authorAssociations: readonly AuthorAssociation[] = [
  'OWNER',
  'MEMBER',
  'COLLABORATOR',
  'CONTRIBUTOR',
  'FIRST_TIME_CONTRIBUTOR',
  'FIRST_TIMER',
  'MANNEQUIN',
  'NONE',
];

export function isAuthorAssociation(value: unknown): value is AuthorAssociation {
  return typeof value === 'string' && (authorAssociations as readonly string[]).includes(value);
}

export interface RepositoryFacts {
  owner: string;
  name: string;
  /** Where the controller fetches the head commit from. */
  cloneUrl: string;
}

export interface PullRequestFacts {
  repository: RepositoryFacts;
  number: number;
  state: 'open' | 'closed';
  merged: boolean;
  headSha: string;
  headRef: string;
  baseRef: string;
  /** Login of the PR's author. */
  author: string;
  authorAssociation: AuthorAssociation;
  /** Label names, as GitHub spells them. */
  labels: string[];
  draft: boolean;
  /** The head branch lives in another repository (or in one that was deleted). */
  fork: boolean;
  /**
   * GitHub's `updated_at` of the pull request as described here (RFC 3339, UTC): what orders
   * two descriptions of it. Always set from GitHub's answers; absent only where facts are rebuilt
   * from a spec that lacks it.
   */
  updatedAt?: string;
}
