// A pull request as GitHub sends it — in a `pull_request` webhook or from the REST API
// (`pull-request` and `pull-request-simple` share the fields read here) — reduced to the
// facts the policy decides on. The payload is checked field by field: a signature proves
// who sent it, not that its shape is what this code expects.
import { isAuthorAssociation, type PullRequestFacts, type RepositoryFacts } from '../policy/pull-request-facts.js';

export class PayloadError extends Error {
  constructor(
    readonly path: string,
    problem: string,
  ) {
    super(`${path}: ${problem}`);
    this.name = 'PayloadError';
  }
}

export interface PullRequestFactsOptions {
  /**
   * Where the controller fetches the repository from; default the base repository's
   * `clone_url`. (Tests and local demos point it at a `file://` repository.)
   */
  cloneUrl?: (repository: RepositoryFacts) => string;
}

type Json = Record<string, unknown>;

function object(parent: Json, key: string, path: string): Json {
  const value = parent[key];
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new PayloadError(`${path}.${key}`, 'expected an object');
  return value as Json;
}

function string(parent: Json, key: string, path: string): string {
  const value = parent[key];
  if (typeof value !== 'string' || value === '') throw new PayloadError(`${path}.${key}`, 'expected a non-empty string');
  return value;
}

const rfc3339 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/i;

/** An RFC 3339 time, in UTC with `Z` (and no fraction when it has none), so equal times are equal strings. */
function time(parent: Json, key: string, path: string): string {
  const value = string(parent, key, path);
  const ms = rfc3339.test(value) ? Date.parse(value) : Number.NaN;
  if (Number.isNaN(ms)) throw new PayloadError(`${path}.${key}`, 'expected an RFC 3339 time');
  return new Date(ms).toISOString().replace('.000Z', 'Z');
}

/** Facts from a `pull_request` object. Throws `PayloadError` naming the first field that is missing or malformed. */
export function pullRequestFacts(value: unknown, options: PullRequestFactsOptions = {}): PullRequestFacts {
  const path = 'pull_request';
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new PayloadError(path, 'expected an object');
  const pr = value as Json;

  const number = pr.number;
  if (typeof number !== 'number' || !Number.isSafeInteger(number) || number < 1)
    throw new PayloadError(`${path}.number`, 'expected a positive integer');
  const state = pr.state;
  if (state !== 'open' && state !== 'closed') throw new PayloadError(`${path}.state`, 'expected "open" or "closed"');

  const base = object(pr, 'base', path);
  const baseRepo = object(base, 'repo', `${path}.base`);
  const head = object(pr, 'head', path);
  // A fork that was deleted leaves `head.repo` null: still foreign code.
  const headRepo = head.repo;
  const fork = typeof headRepo !== 'object' || headRepo === null || (headRepo as Json).id !== baseRepo.id;

  const repository: RepositoryFacts = {
    owner: string(object(baseRepo, 'owner', `${path}.base.repo`), 'login', `${path}.base.repo.owner`),
    name: string(baseRepo, 'name', `${path}.base.repo`),
    cloneUrl: string(baseRepo, 'clone_url', `${path}.base.repo`),
  };
  if (options.cloneUrl) repository.cloneUrl = options.cloneUrl(repository);

  const labelsValue = pr.labels ?? [];
  if (!Array.isArray(labelsValue)) throw new PayloadError(`${path}.labels`, 'expected a list');
  const labels = labelsValue.map((label, i) => {
    if (typeof label !== 'object' || label === null) throw new PayloadError(`${path}.labels[${i}]`, 'expected an object');
    return string(label as Json, 'name', `${path}.labels[${i}]`);
  });

  const association = pr.author_association;
  return {
    repository,
    number,
    state,
    // Webhooks and `GET /pulls/{n}` carry `merged`; list items only `merged_at`.
    merged: pr.merged === true || (typeof pr.merged_at === 'string' && pr.merged_at !== ''),
    headSha: string(head, 'sha', `${path}.head`),
    headRef: string(head, 'ref', `${path}.head`),
    baseRef: string(base, 'ref', `${path}.base`),
    author: string(object(pr, 'user', path), 'login', `${path}.user`),
    // An association GitHub adds later is not one the operator was told to trust.
    authorAssociation: isAuthorAssociation(association) ? association : 'NONE',
    labels,
    draft: pr.draft === true,
    fork,
    // What orders two descriptions of the pull request: a replayed or late one is older.
    updatedAt: time(pr, 'updated_at', path),
  };
}
