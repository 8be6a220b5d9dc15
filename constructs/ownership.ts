/** Who a preview environment is: what the operator knows before rendering anything. */
export interface PreviewIdentity {
  /** Name of the PreviewEnvironment (cluster-scoped) the objects belong to. */
  readonly environment: string;
  readonly repository: { readonly owner: string; readonly name: string };
  readonly pullRequest: number;
  /** The head commit being rendered. */
  readonly sha: string;
  /** The namespace every object of the environment lives in. */
  readonly namespace: string;
  /** The environment's host name (no scheme), e.g. reco-pr-42-893ec0bf3acd.preview.example.com. */
  readonly host: string;
}

/**
 * Ownership labels: on every object a preview renders. Prune selects on
 * `preview.alien6.io/environment` (objects the Algorithm and Database controllers create carry
 * `app.kubernetes.io/managed-by` too, but never the environment label).
 */
export const ownershipLabelKeys = {
  environment: 'preview.alien6.io/environment',
  pullRequest: 'preview.alien6.io/pull-request',
  managedBy: 'app.kubernetes.io/managed-by',
} as const;

export const ownershipAnnotationKeys = {
  /** `owner/name`: too long and too free-form for a label value. */
  repository: 'preview.alien6.io/repository',
  /** The commit rendered; on the Namespace only, so a new commit does not rewrite every object. */
  sha: 'preview.alien6.io/sha',
} as const;

export function ownershipLabels(identity: PreviewIdentity): Record<string, string> {
  return {
    [ownershipLabelKeys.managedBy]: 'preview-operator',
    [ownershipLabelKeys.environment]: identity.environment,
    [ownershipLabelKeys.pullRequest]: String(identity.pullRequest),
  };
}

export function ownershipAnnotations(identity: PreviewIdentity): Record<string, string> {
  return { [ownershipAnnotationKeys.repository]: `${identity.repository.owner}/${identity.repository.name}` };
}
