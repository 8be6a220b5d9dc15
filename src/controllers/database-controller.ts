// The Database controller: the engine's official image as a StatefulSet with a headless and a
// client Service (rendered by the constructs, applied with no write when unchanged), and a
// credentials Secret created once and never rewritten. Deletion needs no finalizer: every
// object is owned by the Database, and the StatefulSet's claim retention policy takes the
// volume claims with it.
import {
  databaseApiVersion, databaseEndpoint, databaseLabel, databaseObjectNames, renderDatabaseWorkloads,
  type DatabaseResource, type DatabaseStatus, type DatabaseWorkloadOptions,
} from '../../constructs/index.js';
import {
  Applier, EventRecorder, ForbiddenError, InvalidError, NotFoundError, controllerReference, isDeleted, parseKey, setCondition, silentLogger,
  toKubeError, updateStatus, refOf,
  type Condition, type ConditionInput, type Informer, type KubeClient, type KubeObject, type Logger, type Manager,
  type ObjectRef, type ReconcileContext, type ReconcileResult, type Reconciler,
} from '../kube/index.js';
import { ensureCredentialsSecret } from './credentials-secret.js';
import { isControlledBy, summarizeWorkload, type WorkloadSummary } from './rollout-workload-status.js';

export const databaseKind = { apiVersion: databaseApiVersion, kind: 'Database' } as const;

export interface DatabaseControllerOptions {
  /** @default silent */
  logger?: Logger;
  /** Where Events go. @default a recorder on the manager's client, component `preview-operator` */
  events?: EventRecorder;
  /** Watch one namespace only. @default all namespaces */
  namespace?: string;
  /** Parallel reconciles. @default 4 */
  workers?: number;
  /** Reconcile every Database this often even without events. @default 600_000 */
  resyncPeriodMs?: number;
  /** Passed to the renderer (image override, StorageClass, resources). @default the renderer's */
  workload?: Pick<DatabaseWorkloadOptions, 'image' | 'storageClassName' | 'resources'>;
  /** @default () => new Date() */
  now?: () => Date;
}

/**
 * Registers the Database controller with `manager` (call before `manager.start()`). It
 * watches Databases and the StatefulSets, Services and Secrets labelled
 * `mycompany.com/database`, mapping each back to its controlling Database.
 */
export function registerDatabaseController(manager: Manager, options: DatabaseControllerOptions = {}): void {
  const owned = { namespace: options.namespace, labelSelector: databaseLabel };
  const databases = manager.informer<KubeObject>(databaseKind, { namespace: options.namespace });
  const statefulSets = manager.informer({ apiVersion: 'apps/v1', kind: 'StatefulSet' }, owned);
  const services = manager.informer({ apiVersion: 'v1', kind: 'Service' }, owned);
  const secrets = manager.informer({ apiVersion: 'v1', kind: 'Secret' }, owned);
  manager.addController({
    name: 'database',
    for: databases,
    // Status-only updates (our own writes) need no reconcile; spec changes and deletions do.
    filter: (e) => e.type !== 'update' || e.old?.metadata.generation !== e.object.metadata.generation,
    owns: [statefulSets, services, secrets],
    reconciler: new DatabaseReconciler(manager.client, { databases, statefulSets, services, secrets }, options),
    workers: options.workers ?? 4,
    resyncPeriodMs: options.resyncPeriodMs,
  });
}

export interface DatabaseInformers {
  databases: Informer<KubeObject>;
  statefulSets: Informer<KubeObject>;
  services: Informer<KubeObject>;
  secrets: Informer<KubeObject>;
}

export class DatabaseReconciler implements Reconciler {
  private readonly logger: Logger;
  private readonly events: EventRecorder;
  private readonly applier: Applier;
  private readonly now: () => Date;

  constructor(private readonly client: KubeClient, private readonly informers: DatabaseInformers, private readonly options: DatabaseControllerOptions = {}) {
    this.logger = options.logger ?? silentLogger;
    this.events = options.events ?? new EventRecorder(client, { component: 'preview-operator', logger: this.logger });
    this.applier = new Applier(client, { lookup: (ref) => this.cached(ref) });
    this.now = options.now ?? (() => new Date());
  }

  async reconcile(key: string, context: ReconcileContext): Promise<ReconcileResult | void> {
    const database = this.informers.databases.get(key) as DatabaseResource | undefined;
    if (!database || database.metadata.deletionTimestamp) return;
    try {
      return await this.sync(database, key);
    } catch (err) {
      // Deleted while this reconcile ran (its namespace torn down under it): nothing left to converge or report.
      if (err instanceof NotFoundError && (await isDeleted(this.client, database as unknown as KubeObject))) return undefined;
      await this.recordRetry(database, context.retries + 1);
      throw err;
    }
  }

  private async sync(database: DatabaseResource, key: string): Promise<ReconcileResult | void> {
    const { namespace, name } = parseKey(key) as { namespace: string; name: string };
    const uid = database.metadata.uid;
    const names = databaseObjectNames(name);
    const owned = (obj: KubeObject | undefined) => (obj && isControlledBy(obj, uid) ? obj : undefined);
    const secretKey = `${namespace}/${names.credentialsSecret}`;

    let failure: string | undefined;
    let storageNote: string | undefined;
    try {
      // The Secret first: the pods read their credentials from it.
      const secret = this.informers.secrets.get(secretKey);
      if (await ensureCredentialsSecret(this.client, database, secret)) {
        if (secret) this.logger.info({ controller: 'database', key }, 'credentials Secret was being deleted: created a new one');
        await this.events.record(database as unknown as KubeObject, 'Normal', 'CredentialsCreated', `created Secret ${names.credentialsSecret} with a new random password`);
      }
      // A StatefulSet's claim templates cannot change: keep the live size and say so.
      const liveSet = owned(this.informers.statefulSets.get(`${namespace}/${names.statefulSet}`));
      const liveStorage = claimStorage(liveSet);
      const spec = liveStorage && liveStorage !== database.spec.storage ? { ...database.spec, storage: liveStorage } : database.spec;
      if (spec !== database.spec) storageNote = `spec.storage ${database.spec.storage} is not applied: existing volume claims keep ${liveStorage} (claim templates of a StatefulSet are immutable)`;
      const desired = renderDatabaseWorkloads({ metadata: { name, namespace, uid }, spec }, {
        ...this.options.workload,
        ownerReferences: [controllerReference(database as unknown as KubeObject)],
      }) as unknown as KubeObject[];
      await this.applier.apply(desired);
    } catch (err) {
      // The namespace is being deleted, and this object with it: nothing left to converge or report.
      if (err instanceof ForbiddenError && err.namespaceTerminating) return undefined;
      if (!(err instanceof InvalidError || err instanceof ForbiddenError)) throw err;
      // Fixable by a user (a quota, a rejected value): a condition and an Event, no crash loop.
      failure = err.message;
      await this.events.record(database as unknown as KubeObject, 'Warning', 'ApplyFailed', err.message);
    }

    const set = owned(this.informers.statefulSets.get(`${namespace}/${names.statefulSet}`));
    const image = this.options.workload?.image ?? officialImage(database);
    const next = databaseStatus(database, set ? summarizeWorkload(set) : undefined, { image, failure, storageNote, now: this.now() });
    const written = await updateStatus(this.client, database as unknown as KubeObject, next as Record<string, unknown>);
    this.logger.debug({ controller: 'database', key, phase: next.phase, statusWritten: written.written }, 'database reconciled');
    return failure ? { requeueAfter: 60_000 } : undefined;
  }

  /** Best effort: the retry count goes to status even though the reconcile failed. */
  private async recordRetry(database: DatabaseResource, retries: number): Promise<void> {
    if (database.status?.retryCount === retries) return;
    try {
      await this.client.patch(refOf(database as unknown as KubeObject), 'merge', { status: { retryCount: retries } }, { subresource: 'status' });
    } catch (err) {
      this.logger.warn({ controller: 'database', name: database.metadata.name, err: toKubeError(err).message }, 'could not record the retry count');
    }
  }

  private cached(ref: ObjectRef): KubeObject | 'absent' | undefined {
    const informer = [this.informers.statefulSets, this.informers.services].find((i) => i.kind.kind === ref.kind && i.kind.apiVersion === ref.apiVersion);
    if (!informer) return undefined;
    return informer.lookup(`${ref.namespace}/${ref.name}`);
  }
}

function claimStorage(statefulSet: KubeObject | undefined): string | undefined {
  const templates = (statefulSet?.spec as { volumeClaimTemplates?: { spec?: { resources?: { requests?: { storage?: string } } } }[] } | undefined)?.volumeClaimTemplates;
  return templates?.[0]?.spec?.resources?.requests?.storage;
}

/** The Database's status from its StatefulSet (pure). */
export function databaseStatus(
  database: DatabaseResource,
  set: WorkloadSummary | undefined,
  extra: { image: string; failure?: string; storageNote?: string; now: Date },
): DatabaseStatus {
  const generation = database.metadata.generation;
  const name = database.metadata.name!;
  const desired = database.spec.replicas ?? 1;
  const ready = set?.ready ?? 0;
  const rolledOut = !!set && set.rolledOut && set.desired === desired && set.image === extra.image;
  let phase: string;
  if (extra.failure) phase = 'Failed';
  else if (!set) phase = 'Pending';
  else if (rolledOut) phase = 'Ready';
  else phase = 'Provisioning';

  let conditions: Condition[] = (database.status?.conditions ?? []) as Condition[];
  const setC = (c: Omit<ConditionInput, 'observedGeneration'>) => (conditions = setCondition(conditions, { ...c, observedGeneration: generation }, extra.now));
  if (rolledOut) setC({ type: 'Ready', status: 'True', reason: 'Available', message: `${ready} of ${desired} replicas ready` });
  else setC({ type: 'Ready', status: 'False', reason: set ? 'Provisioning' : 'Pending', message: set ? `${ready} of ${desired} replicas ready` : 'the StatefulSet does not exist yet' });
  if (set && !rolledOut) setC({ type: 'Progressing', status: 'True', reason: 'RollingOut', message: `rolling out ${database.spec.engine} ${database.spec.version} to ${desired} replicas` });
  else setC({ type: 'Progressing', status: 'False', reason: set ? 'RolloutComplete' : 'Pending', message: set ? `${database.spec.engine} ${database.spec.version}, ${desired} replicas` : 'nothing applied yet' });
  if (extra.failure) setC({ type: 'Degraded', status: 'True', reason: 'ApplyFailed', message: extra.failure });
  else if (extra.storageNote) setC({ type: 'Degraded', status: 'True', reason: 'StorageNotResized', message: extra.storageNote });
  else setC({ type: 'Degraded', status: 'False', reason: 'AsExpected', message: 'no problem detected' });

  return {
    phase,
    observedGeneration: generation,
    readyReplicas: ready,
    endpoint: databaseEndpoint(name, database.metadata.namespace!),
    secretName: databaseObjectNames(name).credentialsSecret,
    conditions: conditions as DatabaseStatus['conditions'],
    retryCount: 0,
  } as DatabaseStatus;
}

/** The official image the renderer uses for the engine and version. */
function officialImage(database: DatabaseResource): string {
  return `${database.spec.engine === 'postgresql' ? 'postgres' : 'mysql'}:${database.spec.version}`;
}
