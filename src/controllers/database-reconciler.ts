// The Database reconciler, a recipe of named steps: the credentials Secret (created once, never
// rewritten: credentials-secret.ts), the engine's official image as the primary's StatefulSet and,
// with replicas > 1, the replicas' (constructs/database-replication.ts), with their Services and
// replication ConfigMap (rendered by the constructs, applied with no write when unchanged; what a
// smaller spec no longer renders is deleted), then the status (database-status.ts). Deletion needs no finalizer: every object
// is owned by the Database, and the StatefulSet's claim retention policy takes the volume
// claims with it. Wiring: database-controller.ts.
import {
  databaseObjectNames,
  isDatabase,
  renderDatabaseWorkloads,
  type DatabaseResource,
  type DatabaseWorkloadOptions,
} from '../../constructs/index.js';
import {
  Applier,
  cachedLookup,
  EventRecorder,
  ForbiddenError,
  InvalidError,
  NotFoundError,
  controllerReference,
  isControlledBy,
  isDeleted,
  refOf,
  silentLogger,
  toKubeError,
  updateStatus,
  type CacheReader,
  type KubeObject,
  type Logger,
  type ObjectClient,
  type ReconcileContext,
  type ReconcileResult,
  type Reconciler,
} from '../kube/index.js';
import { ensureCredentialsSecret } from './credentials-secret.js';
import { createsAny, ensureNamespaceActive, NamespaceTerminatingError, namespaceTerminating } from './namespace-terminating.js';
import { databaseStatus, officialImage, type DatabaseSets } from './database-status.js';
import { summarizeWorkload } from './rollout-workload-status.js';

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

/** The caches the reconciler reads: the Databases, and the kinds their workloads are made of. */
export interface DatabaseInformers {
  databases: CacheReader;
  statefulSets: CacheReader;
  services: CacheReader;
  secrets: CacheReader;
  configMaps: CacheReader;
  /** The namespaces: nothing is written into one being deleted. */
  namespaces?: CacheReader;
}

/** What a user can fix, found while applying: a refusal, storage that cannot change. */
interface Problems {
  failure?: string;
  storageNote?: string;
}

/** What the apply steps came to: the problems found, or a namespace on its way out. */
type Applied = Problems | 'namespace-terminating';

export class DatabaseReconciler implements Reconciler {
  private readonly logger: Logger;
  private readonly events: EventRecorder;
  private readonly applier: Applier;
  private readonly now: () => Date;

  constructor(
    private readonly client: ObjectClient,
    private readonly informers: DatabaseInformers,
    private readonly options: DatabaseControllerOptions = {},
  ) {
    this.logger = options.logger ?? silentLogger;
    this.events = options.events ?? new EventRecorder(client, { component: 'preview-operator', logger: this.logger });
    this.applier = new Applier(client, cachedLookup([informers.statefulSets, informers.services, informers.configMaps]));
    this.now = options.now ?? (() => new Date());
  }

  async reconcile(key: string, context: ReconcileContext): Promise<ReconcileResult | void> {
    const database = this.informers.databases.get(key);
    if (!database || !isDatabase(database) || database.metadata.deletionTimestamp) return;
    // Its namespace is going, and the Database with it: every create there would be refused.
    if (namespaceTerminating(this.informers.namespaces, database.metadata.namespace)) return;
    try {
      return await this.converge(key, database);
    } catch (err) {
      // Deleted while this reconcile ran (its namespace torn down under it): nothing left to converge or report.
      if (err instanceof NotFoundError && (await isDeleted(this.client, database))) return undefined;
      await this.recordRetry(database, context.retries + 1);
      throw err;
    }
  }

  /** The recipe: credentials and workloads → finalize status → when to look again. */
  private async converge(key: string, database: DatabaseResource): Promise<ReconcileResult | void> {
    const applied = await this.apply(key, database);
    if (applied === 'namespace-terminating') return undefined;
    const status = await this.finalizeStatus(database, applied);
    this.logger.debug({ controller: 'database', key, phase: status.phase, statusWritten: status.written }, 'database reconciled');
    return applied.failure ? { requeueAfter: 60_000 } : undefined;
  }

  /**
   * The credentials, then the workloads. A refusal a user can fix (a quota, a rejected value)
   * becomes a condition and an Event, not a crash loop.
   */
  private async apply(key: string, database: DatabaseResource): Promise<Applied> {
    try {
      await this.ensureCredentials(key, database);
      return await this.applyWorkloads(database);
    } catch (err) {
      // The namespace is being deleted, and this object with it: nothing left to converge or report.
      if (err instanceof NamespaceTerminatingError || (err instanceof ForbiddenError && err.namespaceTerminating))
        return 'namespace-terminating';
      if (!(err instanceof InvalidError || err instanceof ForbiddenError)) throw err;
      await this.events.record(database, 'Warning', 'ApplyFailed', err.message);
      return { failure: err.message };
    }
  }

  /** The Secret first: the pods read their credentials from it. */
  private async ensureCredentials(key: string, database: DatabaseResource): Promise<void> {
    const name = databaseObjectNames(database.metadata.name).credentialsSecret;
    const secret = this.informers.secrets.get(`${database.metadata.namespace}/${name}`);
    if (!secret || secret.metadata.deletionTimestamp) await ensureNamespaceActive(this.client, database.metadata.namespace ?? '');
    if (!(await ensureCredentialsSecret(this.client, database, secret))) return;
    if (secret) this.logger.info({ controller: 'database', key }, 'credentials Secret was being deleted: created a new one');
    await this.events.record(database, 'Normal', 'CredentialsCreated', `created Secret ${name} with a new random password`);
  }

  /** The StatefulSet and its Services. A StatefulSet's claim templates cannot change: the live size stays, and the status says so. */
  private async applyWorkloads(database: DatabaseResource): Promise<Problems> {
    const { name, namespace, uid } = database.metadata;
    const liveStorage = claimStorage(this.statefulSet(database));
    const resized = !!liveStorage && liveStorage !== database.spec.storage;
    const spec = resized ? { ...database.spec, storage: liveStorage } : database.spec;
    const objects = renderDatabaseWorkloads(
      { metadata: { name, namespace, uid }, spec },
      {
        ...this.options.workload,
        ownerReferences: [controllerReference(database)],
      },
    );
    const { statefulSets, services, configMaps } = this.informers;
    if (createsAny([statefulSets, services, configMaps], objects)) await ensureNamespaceActive(this.client, namespace ?? '');
    await this.applier.apply(objects);
    await this.deleteUnrendered(database, objects);
    if (!resized) return {};
    const storageNote =
      `spec.storage ${database.spec.storage} is not applied: existing volume claims keep ${liveStorage} ` +
      '(claim templates of a StatefulSet are immutable)';
    return { storageNote };
  }

  /**
   * Scaled down to one server: the replicas' StatefulSet and read-only Service are no longer
   * rendered, and go (their volume claims with them). Read from the caches: nothing to delete, no call.
   */
  private async deleteUnrendered(database: DatabaseResource, rendered: readonly KubeObject[]): Promise<void> {
    const { name, namespace, uid } = database.metadata;
    const names = databaseObjectNames(name);
    const candidates = [
      [this.informers.statefulSets, names.replicaStatefulSet],
      [this.informers.services, names.readOnlyService],
    ] as const;
    for (const [informer, objectName] of candidates) {
      if (rendered.some((o) => o.kind === informer.kind.kind && o.metadata.name === objectName)) continue;
      const live = informer.get(`${namespace}/${objectName}`);
      if (!live || !isControlledBy(live, uid) || live.metadata.deletionTimestamp) continue;
      try {
        await this.client.delete(refOf(live), { preconditions: { uid: live.metadata.uid } });
      } catch (err) {
        if (!(err instanceof NotFoundError)) throw err;
      }
    }
  }

  /** The status from the StatefulSets as the cache has them now. */
  private async finalizeStatus(database: DatabaseResource, applied: Problems): Promise<{ phase?: string; written: boolean }> {
    const primary = this.statefulSet(database, 'statefulSet');
    const replicas = (database.spec.replicas ?? 1) > 1 ? this.statefulSet(database, 'replicaStatefulSet') : undefined;
    const sets: DatabaseSets = {
      ...(primary ? { primary: summarizeWorkload(primary) } : {}),
      ...(replicas ? { replicas: summarizeWorkload(replicas) } : {}),
    };
    const image = this.options.workload?.image ?? officialImage(database);
    const next = databaseStatus(database, sets, { image, ...applied, now: this.now() });
    const written = await updateStatus(this.client, database, next);
    return { phase: next.phase, written: written.written };
  }

  /** The primary's (or the replicas') StatefulSet, when the Database controls it. */
  private statefulSet(database: DatabaseResource, which: 'statefulSet' | 'replicaStatefulSet' = 'statefulSet'): KubeObject | undefined {
    const { name, namespace, uid } = database.metadata;
    const set = this.informers.statefulSets.get(`${namespace}/${databaseObjectNames(name)[which]}`);
    return set && isControlledBy(set, uid) ? set : undefined;
  }

  /** Best effort: the retry count goes to status even though the reconcile failed. */
  private async recordRetry(database: DatabaseResource, retries: number): Promise<void> {
    if (database.status?.retryCount === retries) return;
    try {
      await this.client.patch(refOf(database), 'merge', { status: { retryCount: retries } }, { subresource: 'status' });
    } catch (err) {
      const fields = { controller: 'database', name: database.metadata.name, err: toKubeError(err).message };
      this.logger.warn(fields, 'could not record the retry count');
    }
  }
}

function claimStorage(statefulSet: KubeObject | undefined): string | undefined {
  type ClaimTemplate = { spec?: { resources?: { requests?: { storage?: string } } } };
  const templates = (statefulSet?.spec as { volumeClaimTemplates?: ClaimTemplate[] } | undefined)?.volumeClaimTemplates;
  return templates?.[0]?.spec?.resources?.requests?.storage;
}
