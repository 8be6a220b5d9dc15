// Whether an existing PreviewEnvironment already carries what the operator would apply:
// the resync writes only when it does not, so a pass over an unchanged world makes no
// write at all (a server-side apply of the same fields is a no-op for the object but still
// a request, an audit entry and a watch event for every controller). A newer
// `spec.pullRequest.updatedAt` alone is no reason to write: every comment on the pull request
// moves GitHub's `updated_at`, the operator's own sticky comment included.
import type { KubeObject } from '../kube/kube-object.js';

/**
 * True when every field of `desired` (spec, labels, annotations) has the same value in
 * `existing`. Fields only in `existing` (API-server defaults, other managers' fields) do not
 * matter: server-side apply would leave them. Lists compare whole and in order, as apply
 * would set them.
 */
export function carriesDesired(existing: KubeObject, desired: KubeObject): boolean {
  const have = existing as KubeObject & { spec?: unknown };
  const want = desired as KubeObject & { spec?: unknown };
  return (
    contains(have.spec, withoutUpdate(want.spec)) &&
    contains(have.metadata?.labels ?? {}, want.metadata?.labels ?? {}) &&
    contains(have.metadata?.annotations ?? {}, want.metadata?.annotations ?? {})
  );
}

function contains(have: unknown, want: unknown): boolean {
  if (want === undefined) return true;
  if (Array.isArray(want)) {
    return Array.isArray(have) && have.length === want.length && want.every((w, i) => contains(have[i], w) && contains(w, have[i]));
  }
  if (typeof want === 'object' && want !== null) {
    if (typeof have !== 'object' || have === null || Array.isArray(have)) return false;
    return Object.entries(want).every(([k, v]) => contains((have as Record<string, unknown>)[k], v));
  }
  return have === want;
}

function withoutUpdate(spec: unknown): unknown {
  const pullRequest = (spec as { pullRequest?: Record<string, unknown> } | undefined)?.pullRequest;
  if (!pullRequest || !('updatedAt' in pullRequest)) return spec;
  const { updatedAt: _ignored, ...rest } = pullRequest;
  return { ...(spec as object), pullRequest: rest };
}
