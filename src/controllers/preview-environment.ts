// The PreviewEnvironment controller's wiring: the informers it reads, the events that wake an
// environment, and the reconciler (preview-environment-reconciler.ts, where the work is, with the
// map of the other files). Woken by:
//   - its own PreviewEnvironment: spec changes, deletion, finalizer edits (not our status writes);
//   - its Namespace (owned), and the Algorithms, Databases and Ingresses it applied (labelled);
//   - a guard deleted or edited by anyone else — the NetworkPolicy, ResourceQuota, LimitRange, the
//     default ServiceAccount — so that it is put back at once, not at the next push;
//   - a change to another environment of its repository (above all a deletion), which may free a slot;
//   - the wildcard certificate's Secret (every environment: a renewal is copied into each namespace),
//     and its copy in the environment's namespace (deleted or edited: put back).
// Nothing in a namespace being deleted wakes it but the namespace itself, which it waits for; nor
// does the creation of an object it applied, coming back by a watch while no one else has written
// it (the reconcile that created it has acted on it).
import { algorithmKind, databaseKind, ownershipLabelKeys, previewEnvironmentKind } from '../../constructs/index.js';
import {
  createdBy,
  type CacheReader,
  type Controller,
  type EventFilter,
  type Informer,
  type KubeObject,
  type Manager,
  type Watch,
} from '../kube/index.js';
import { repositoryKey } from '../github/octokit-factory.js';
import { byEnvironment, guardCacheKinds, ingressKind, namespaceKind, repositoryIndex } from './preview-environment-caches.js';
import { withDefaults, type PreviewEnvironmentControllerOptions } from './preview-environment-options.js';
import { PreviewEnvironmentReconciler } from './preview-environment-reconciler.js';
import { inTerminatingNamespace, namespaceUpdateWhileGoing } from './namespace-terminating.js';
import { secretKind, wildcardCopyLabel, type WildcardTlsInformers } from './preview-environment-wildcard-tls.js';
import type { EnvironmentObject } from './preview-environment-status.js';

export type { PreviewEnvironmentControllerOptions } from './preview-environment-options.js';
export type { EnvironmentObject, EnvironmentStatus } from './preview-environment-status.js';
export { previewEnvironmentFinalizer } from './preview-environment-teardown.js';

/** What `registerPreviewEnvironmentController` returns (e.g. for a webhook to enqueue a key). */
export interface PreviewEnvironmentController {
  controller: Controller<EnvironmentObject>;
}

const environmentLabel = ownershipLabelKeys.environment;

/** Spec changes, deletion, and finalizer edits; our own status writes need no second look. */
const specOrDeletionChanged: EventFilter<EnvironmentObject> = (e) =>
  e.type !== 'update' ||
  e.old?.metadata.generation !== e.object.metadata.generation ||
  e.old?.metadata.deletionTimestamp !== e.object.metadata.deletionTimestamp;

/** The environment an object was applied for (its ownership label). */
function labelledEnvironment(obj: KubeObject): string[] {
  const name = obj.metadata.labels?.[environmentLabel];
  return name ? [name] : [];
}

/** Registers the controller and its informers with the manager (before `manager.start()`). */
export function registerPreviewEnvironmentController(
  manager: Manager,
  options: PreviewEnvironmentControllerOptions,
): PreviewEnvironmentController {
  const selector = options.environmentSelector ? { labelSelector: options.environmentSelector } : {};
  const environments = manager.informer<EnvironmentObject>(previewEnvironmentKind, selector);
  environments.addIndex(repositoryIndex, (e) => (e.spec?.repository ? [repositoryKey(e.spec.repository)] : []));
  // Every namespace when the process already watches them all (the Algorithm and Database
  // controllers, registered first): one watch and one cache, the environment's own found by name
  // and controlling owner. Otherwise only ours, by the ownership label.
  const namespaces = manager.hasInformer(namespaceKind) ? manager.informer(namespaceKind) : manager.informer(namespaceKind, byEnvironment);
  const algorithms = manager.informer(algorithmKind);
  const databases = manager.informer(databaseKind);
  const ingresses = manager.informer(ingressKind, byEnvironment);
  const guards = guardCacheKinds.map((kind) => manager.informer(kind, byEnvironment));
  const wildcardTls = wildcardTlsInformers(manager, options);
  const informers = { environments, namespaces, algorithms, databases, ingresses, guards, wildcardTls };
  const settings = withDefaults(options);
  const reconciler = new PreviewEnvironmentReconciler(manager.client, informers, settings);
  const [terminating, ownCreation] = [inTerminatingNamespace(namespaces), createdBy(manager.client.fieldManager)];
  const controller = manager.addController<EnvironmentObject>({
    name: 'preview-environment',
    for: environments,
    filter: specOrDeletionChanged,
    owns: [namespaces],
    watches: [
      { informer: algorithms, map: labelledEnvironment },
      { informer: databases, map: labelledEnvironment },
      { informer: ingresses, map: labelledEnvironment },
      ...guards.map((informer) => ({ informer, map: (obj: KubeObject) => reconciler.driftedGuard(informer, obj) })),
      { informer: environments, map: (obj) => reconciler.queuedSiblings(obj as EnvironmentObject) },
      { informer: namespaces, map: (obj) => reconciler.queuedBehindNamespace(obj) },
      ...wildcardTlsWatches(wildcardTls, environments),
    ],
    ignore: (obj, event) => terminating(obj) || ownCreation(obj, event) || namespaceUpdateWhileGoing(obj, event),
    reconciler,
    workers: settings.workers,
    resyncPeriodMs: settings.resyncPeriodMs,
  });
  return { controller };
}

/** The wildcard TLS informers as the wiring makes them: caches to read, and sources of events. */
type WildcardTlsWatched = WildcardTlsInformers & { copies: Informer<KubeObject>; source?: Informer<KubeObject> };

/**
 * The wildcard certificate's Secret (one object: its namespace and name) and the copies of it
 * (labelled; cached in every mode, so that a copy left from an earlier wildcard run is seen and deleted).
 */
function wildcardTlsInformers(manager: Manager, options: PreviewEnvironmentControllerOptions): WildcardTlsWatched {
  const secret = options.tlsMode && options.tlsMode !== 'per-preview' ? options.tlsWildcardSecret : undefined;
  const source = secret && manager.informer(secretKind, { namespace: secret.namespace, fieldSelector: `metadata.name=${secret.name}` });
  return { copies: manager.informer(secretKind, { labelSelector: wildcardCopyLabel }), ...(source ? { source } : {}) };
}

/** A change of the source wakes every environment; a change of a copy, the environment of its namespace (its name). */
function wildcardTlsWatches(informers: WildcardTlsWatched, environments: CacheReader<EnvironmentObject>): Watch[] {
  const everyEnvironment = () => environments.list().map((e) => e.metadata.name);
  const copies: Watch = { informer: informers.copies, map: (obj) => (obj.metadata.namespace ? [obj.metadata.namespace] : []) };
  return informers.source ? [copies, { informer: informers.source, map: everyEnvironment }] : [copies];
}
