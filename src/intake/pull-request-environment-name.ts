// The name of a pull request's PreviewEnvironment: deterministic (the webhook, the resync
// and a human reach the same object), a DNS-1123 label (it names the namespace too), and
// collision-free across repositories whose names shorten alike.
import { hash as digest } from 'node:crypto';

const maxLength = 63;
const hashLength = 8;

/**
 * `pr-<number>-<repository>-<hash>`: the repository part is the name lower-cased with every
 * other character run as `-`, shortened to fit 63 characters; the hash (of `owner/name`,
 * lower-cased since GitHub names are case-insensitive) tells apart repositories with the
 * same name under different owners, or whose names shorten to the same prefix.
 */
export function environmentName(repository: { owner: string; name: string }, pullRequest: number): string {
  if (!Number.isSafeInteger(pullRequest) || pullRequest < 1) throw new RangeError(`invalid pull request number ${pullRequest}`);
  const hash = digest('sha256', `${repository.owner}/${repository.name}`.toLowerCase(), 'hex').slice(0, hashLength);
  const prefix = `pr-${pullRequest}-`;
  const room = maxLength - prefix.length - 1 - hashLength;
  const slug = repository.name
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .slice(0, room)
    .replace(/^-+|-+$/g, '');
  return slug ? `${prefix}${slug}-${hash}` : `${prefix}${hash}`;
}
