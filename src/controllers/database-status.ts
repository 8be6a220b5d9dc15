// What a Database says about itself, pure: its phase and Ready / Progressing / Degraded
// conditions from its StatefulSets (the primary's and, with replicas > 1, the replicas'), its
// endpoint, which pod is the primary, how many replicas stream (a replica is ready only while it
// streams from the primary) and the name of its credentials Secret.
import {
  databaseEndpoint,
  databaseObjectNames,
  primaryPodName,
  type DatabaseResource,
  type DatabaseStatus,
} from '../../constructs/index.js';
import { setCondition, setKstatusConditions, type Condition, type ConditionInput, type KstatusSituation } from '../kube/index.js';
import type { WorkloadSummary } from './rollout-workload-status.js';

/** What the status is computed from besides the Database and its StatefulSet. */
export interface DatabaseStatusExtra {
  /** The image the StatefulSet should run. */
  image: string;
  /** Why the API server refused the workloads, when a user can fix it. */
  failure?: string;
  /** Why the spec's storage is not what the volume claims have. */
  storageNote?: string;
  now: Date;
}

/** The Database's StatefulSets as their summaries; absent where none exists (yet). */
export interface DatabaseSets {
  primary?: WorkloadSummary;
  replicas?: WorkloadSummary;
}

type Stated = Omit<ConditionInput, 'observedGeneration'>;

/** The Database's status from its StatefulSets (pure). */
export function databaseStatus(database: DatabaseResource, sets: DatabaseSets, extra: DatabaseStatusExtra): DatabaseStatus {
  const generation = database.metadata.generation;
  const { name, namespace = '' } = database.metadata;
  const set = serversOf(database, sets);
  const rolledOut = !!set && set.rolledOut && set.desired === desiredReplicas(database) && set.image === extra.image;
  let phase: string;
  if (extra.failure) phase = 'Failed';
  else if (!set) phase = 'Pending';
  else if (rolledOut) phase = 'Ready';
  else phase = 'Provisioning';

  let conditions: Condition[] = database.status?.conditions ?? [];
  const stated = databaseConditions(database, sets, set, rolledOut, extra);
  for (const condition of stated) conditions = setCondition(conditions, { ...condition, observedGeneration: generation }, extra.now);
  conditions = setKstatusConditions(conditions, databaseSituation(stated, set), generation, extra.now);
  return {
    phase,
    observedGeneration: generation,
    readyReplicas: set?.ready ?? 0,
    ...(sets.primary ? { primary: primaryPodName(name) } : {}),
    streamingReplicas: sets.replicas?.ready ?? 0,
    endpoint: databaseEndpoint(name, namespace),
    secretName: databaseObjectNames(name).credentialsSecret,
    conditions,
    retryCount: 0,
  };
}

function databaseConditions(
  database: DatabaseResource,
  sets: DatabaseSets,
  set: WorkloadSummary | undefined,
  rolledOut: boolean,
  extra: DatabaseStatusExtra,
): Stated[] {
  const desired = desiredReplicas(database);
  const ready = set?.ready ?? 0;
  const { engine, version } = database.spec;
  const servers =
    desired > 1
      ? `primary ${sets.primary?.ready ? 'ready' : 'not ready'}, ${streaming(sets)} of ${desired - 1} replicas streaming`
      : `${ready} of ${desired} replicas ready`;
  const stated: Stated[] = [];
  if (rolledOut) stated.push({ type: 'Ready', status: 'True', reason: 'Available', message: servers });
  else if (set) stated.push({ type: 'Ready', status: 'False', reason: 'Provisioning', message: servers });
  else stated.push({ type: 'Ready', status: 'False', reason: 'Pending', message: 'the StatefulSet does not exist yet' });
  if (set && !rolledOut) {
    const message = `rolling out ${engine} ${version} to ${desired} replicas`;
    stated.push({ type: 'Progressing', status: 'True', reason: 'RollingOut', message });
  } else if (set) {
    stated.push({ type: 'Progressing', status: 'False', reason: 'RolloutComplete', message: `${engine} ${version}, ${desired} replicas` });
  } else {
    stated.push({ type: 'Progressing', status: 'False', reason: 'Pending', message: 'nothing applied yet' });
  }
  if (extra.failure) stated.push({ type: 'Degraded', status: 'True', reason: 'ApplyFailed', message: extra.failure });
  else if (extra.storageNote) stated.push({ type: 'Degraded', status: 'True', reason: 'StorageNotResized', message: extra.storageNote });
  else stated.push({ type: 'Degraded', status: 'False', reason: 'AsExpected', message: 'no problem detected' });
  return stated;
}

/**
 * kstatus's view (Reconciling / Stalled): stalled on what needs a person (a refused apply, a failed
 * rollout, storage the volumes cannot grow to), current once rolled out, else still converging.
 */
function databaseSituation(stated: Stated[], set: WorkloadSummary | undefined): KstatusSituation {
  const ready = stated.find((c) => c.type === 'Ready')!;
  const degraded = stated.find((c) => c.type === 'Degraded')!;
  if (degraded.status === 'True') return { state: 'stalled', reason: degraded.reason, message: degraded.message };
  if (set?.failure) return { state: 'stalled', reason: 'RolloutFailed', message: set.failure };
  if (ready.status === 'True') return { state: 'current' };
  const progressing = stated.find((c) => c.type === 'Progressing' && c.status === 'True');
  return { state: 'progressing', reason: progressing?.reason ?? ready.reason, message: progressing?.message ?? ready.message };
}

/**
 * The servers of both StatefulSets as one workload: rolled out when both are and run the same
 * image. A replicated Database whose replicas' StatefulSet is missing is not rolled out.
 */
function serversOf(database: DatabaseResource, { primary, replicas }: DatabaseSets): WorkloadSummary | undefined {
  if (!primary) return undefined;
  if (desiredReplicas(database) <= 1 && !replicas) return primary;
  const desired = primary.desired + (replicas?.desired ?? 0);
  const ready = primary.ready + (replicas?.ready ?? 0);
  const rolledOut = primary.rolledOut && !!replicas?.rolledOut && replicas.image === primary.image;
  const failure = primary.failure ?? replicas?.failure;
  return { desired, ready, rolledOut, ...(failure ? { failure } : {}), ...(primary.image ? { image: primary.image } : {}) };
}

function streaming(sets: DatabaseSets): number {
  return sets.replicas?.ready ?? 0;
}

function desiredReplicas(database: DatabaseResource): number {
  return database.spec.replicas ?? 1;
}

/** The official image the renderer uses for the engine and version. */
export function officialImage(database: DatabaseResource): string {
  return `${database.spec.engine === 'postgresql' ? 'postgres' : 'mysql'}:${database.spec.version}`;
}
