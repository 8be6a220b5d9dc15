// What a Deployment or StatefulSet says about its rollout, read from the object alone (pure),
// the way `kubectl rollout status` reads it.
import type { KubeObject } from '../kube/index.js';

export interface WorkloadSummary {
  /** The replicas asked for (`spec.replicas`, 1 when unset). */
  desired: number;
  ready: number;
  /** The controller has seen the current spec and every replica runs it and is available. */
  rolledOut: boolean;
  /** Why the rollout cannot finish (e.g. ProgressDeadlineExceeded), if it says so. */
  failure?: string;
  /** The first container's image. */
  image?: string;
}

interface WorkloadStatus {
  observedGeneration?: number;
  replicas?: number;
  readyReplicas?: number;
  updatedReplicas?: number;
  availableReplicas?: number;
  currentRevision?: string;
  updateRevision?: string;
  conditions?: { type: string; status: string; reason?: string; message?: string }[];
}

interface WorkloadSpec {
  replicas?: number;
  template?: { spec?: { containers?: { image?: string }[] } };
}

/** Whether the workload's controller has finished rolling out `desired` replicas of its current spec. */
function isRolledOut(workload: KubeObject, status: WorkloadStatus, desired: number): boolean {
  const observed = (status.observedGeneration ?? 0) >= (workload.metadata.generation ?? 0);
  const updated = status.updatedReplicas ?? 0;
  const current = (status.replicas ?? 0) === desired;
  if (workload.kind === 'StatefulSet') {
    const revisionsAgree = !status.updateRevision || status.currentRevision === status.updateRevision;
    return observed && (status.readyReplicas ?? 0) >= desired && updated >= desired && current && revisionsAgree;
  }
  return observed && updated >= desired && (status.availableReplicas ?? 0) >= desired && current;
}

export function summarizeWorkload(workload: KubeObject): WorkloadSummary {
  const spec = (workload.spec ?? {}) as WorkloadSpec;
  const status = (workload.status ?? {}) as WorkloadStatus;
  const desired = spec.replicas ?? 1;
  const ready = status.readyReplicas ?? 0;
  const rolledOut = isRolledOut(workload, status, desired);
  const stuck = status.conditions?.find((c) => c.type === 'Progressing' && c.status === 'False' && c.reason === 'ProgressDeadlineExceeded');
  const image = spec.template?.spec?.containers?.[0]?.image;
  return {
    desired,
    ready,
    rolledOut,
    ...(stuck ? { failure: stuck.message || 'ProgressDeadlineExceeded' } : {}),
    ...(image ? { image } : {}),
  };
}
