// One comment per PR, edited in place: found by its id when known, else by its hidden
// marker among the operator's own comments (so a restarted operator that lost the id edits the
// same comment; anyone can write the marker, so a comment by someone else is never adopted),
// created only when neither exists — and a create whose answer was lost is looked up by the
// marker before it is sent again (createOnce).
import { hash as digest } from 'node:crypto';
import { commentMarker } from './comment-body.js';
import { createOnce } from '../octokit-create-once.js';
import type { GitHubClient, RepositoryName } from '../octokit-factory.js';

export interface StickyComment {
  commentId: number;
  /** sha256 of the body now on GitHub. */
  hash: string;
}

export function commentHash(body: string): string {
  return digest('sha256', body, 'hex');
}

const status = (err: unknown) => (err as { status?: number }).status;

/** The first comment on the PR by `author` (a login) whose body starts with the marker, if any. */
export async function findStickyComment(
  client: GitHubClient,
  repository: RepositoryName,
  pullRequest: number,
  author: string,
): Promise<{ id: number; body: string } | undefined> {
  const marker = commentMarker(pullRequest);
  const login = author.toLowerCase(); // GitHub's logins are case-insensitive
  // Every page is a conditional request: re-listing an unchanged PR costs no rate limit.
  for await (const page of client.paginate.iterator(client.rest.issues.listComments, {
    owner: repository.owner,
    repo: repository.name,
    issue_number: pullRequest,
    per_page: 100,
  })) {
    const found = page.data.find((c) => c.user?.login.toLowerCase() === login && c.body?.startsWith(marker));
    if (found) return { id: found.id, body: found.body ?? '' };
  }
  return undefined;
}

/**
 * Makes the PR's comment say `body`; sends nothing when `known` says it already does.
 * `ownLogin` names the operator's account, asked only when the comment must be looked for.
 */
export async function upsertStickyComment(
  client: GitHubClient,
  repository: RepositoryName,
  pullRequest: number,
  body: string,
  known: { commentId?: number; lastCommentHash?: string },
  ownLogin: () => Promise<string>,
): Promise<StickyComment> {
  const hash = commentHash(body);
  const params = { owner: repository.owner, repo: repository.name };
  if (known.commentId !== undefined) {
    if (known.lastCommentHash === hash) return { commentId: known.commentId, hash };
    try {
      await client.rest.issues.updateComment({ ...params, comment_id: known.commentId, body });
      return { commentId: known.commentId, hash };
    } catch (err) {
      // Deleted by someone: find another marked comment or start a new one.
      if (status(err) !== 404) throw err;
    }
  }
  const find = async () => findStickyComment(client, repository, pullRequest, await ownLogin());
  // A create whose answer was lost is found by its marker, never posted twice.
  const existing =
    (await find()) ??
    (await createOnce(client, {
      find,
      create: async () => ({ id: (await client.rest.issues.createComment({ ...params, issue_number: pullRequest, body })).data.id, body }),
    }));
  if (existing.body !== body) await client.rest.issues.updateComment({ ...params, comment_id: existing.id, body });
  return { commentId: existing.id, hash };
}
