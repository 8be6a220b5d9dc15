// What a pod spec can make reach past its namespace or outlive its environment, beyond what Pod
// Security checks:
// - An inline CSI volume hands its attributes to a CSI driver that acts with its own identity:
//   cert-manager's csi-driver issues a certificate for any name from any issuer (past the
//   Certificate rules), an NFS or SMB driver mounts any export the node can reach (past the
//   NetworkPolicy and the claim rules). Pod Security `restricted` allows every driver; previews
//   get only the drivers the operator names (default none).
// - A long termination grace period keeps a pod that ignores SIGTERM running after its namespace
//   is deleted — the kubelet waits it out — so the namespace stays Terminating, its slot held and
//   its CPUs and GPUs in use, past the PR's close or the TTL.
import { asObject, asObjects } from './guard-json.js';
import type { RenderPolicy, Violate } from './guard-rendered-objects.js';

/** The longest grace period a preview's pods may ask for, in seconds (Kubernetes' default is 30). */
export const maxTerminationGraceSeconds = 300;

export function checkPodReach(pod: { spec: Record<string, unknown>; path: string }, policy: RenderPolicy, violate: Violate): void {
  const drivers = policy.csiDrivers ?? [];
  asObjects(pod.spec.volumes).forEach((volume, i) => {
    if (volume.csi === undefined) return;
    const driver = String(asObject(volume.csi)?.driver ?? '');
    if (drivers.includes(driver)) return;
    const allowed = drivers.length > 0 ? `previews may use ${drivers.join(', ')}` : 'previews may use none';
    violate(
      'inline-volume',
      `${pod.path}.volumes[${i}] is an inline CSI volume of driver "${driver}", which acts on its attributes with its own identity; ${allowed}`,
    );
  });
  const grace = pod.spec.terminationGracePeriodSeconds;
  if (grace !== undefined && !(typeof grace === 'number' && grace <= maxTerminationGraceSeconds)) {
    violate(
      'termination-grace',
      `${pod.path}.terminationGracePeriodSeconds is ${JSON.stringify(grace)}: at most ${maxTerminationGraceSeconds}, or the pod outlives its namespace's deletion`,
    );
  }
}
