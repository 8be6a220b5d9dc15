/** A DNS label from free text: lower case, runs of other characters as one `-`, at most `max` characters. */
function dnsLabel(text: string, max: number): string {
  return text
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .slice(0, max)
    .replace(/^-+|-+$/g, '');
}

/**
 * The host name of a preview: `<prefix>-pr-<number>-<repository hash>.<domain>`, where the prefix
 * is the configuration's `hostPrefix` or else the repository name, shortened so that the first
 * label stays within DNS's 63 characters. The prefix is the pull request's to choose, so the hash
 * is what keeps one repository's previews off another's hosts (two `web` repositories of two
 * owners, or a `hostPrefix` copied from another repository): the operator passes 12 hex
 * characters of sha256 of `owner/name` (`repositoryHash` in src/synth/render-preview.ts).
 */
export function previewHostname(params: {
  readonly hostPrefix?: string;
  readonly repositoryName: string;
  readonly repositoryHash: string;
  readonly pullRequest: number;
  readonly domain: string;
}): string {
  const suffix = `-pr-${params.pullRequest}-${dnsLabel(params.repositoryHash, 20)}`;
  const prefix = dnsLabel(params.hostPrefix ?? params.repositoryName, 63 - suffix.length) || 'preview';
  return `${prefix}${suffix}.${params.domain}`;
}
