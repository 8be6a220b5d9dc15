import type { k8s } from 'cdk8s-plus-33';

// Pod Security Standards, level `restricted`: every pod the library renders must be
// admitted by a namespace enforcing it (https://kubernetes.io/docs/concepts/security/pod-security-standards/).

/** The pod-level half: non-root, a fixed user, the runtime's default seccomp profile. */
export function restrictedPodSecurityContext(user: number): k8s.PodSecurityContext {
  return {
    runAsNonRoot: true,
    runAsUser: user,
    runAsGroup: user,
    // Volumes (claims, emptyDirs) become group-writable for the container's user.
    fsGroup: user,
    fsGroupChangePolicy: 'OnRootMismatch',
    seccompProfile: { type: 'RuntimeDefault' },
  };
}

/** The container-level half: no privilege escalation, no capabilities. */
export function restrictedContainerSecurityContext(readOnlyRootFilesystem: boolean): k8s.SecurityContext {
  return {
    allowPrivilegeEscalation: false,
    capabilities: { drop: ['ALL'] },
    readOnlyRootFilesystem,
    runAsNonRoot: true,
  };
}
