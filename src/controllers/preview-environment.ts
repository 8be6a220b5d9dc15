// The PreviewEnvironment controller's wiring: the informers it reads, the events that wake an
// environment, and the reconciler (preview-environment-reconciler.ts, where the work is, with the
// map of the other files). Woken by:
//   - its own PreviewEnvironment: spec changes, deletion, finalizer edits (not our status writes);
//   - its Namespace (owned), and the Algorithms, Databases and Ingresses it applied (labelled);
//   - a guard deleted or edited by anyone else — the NetworkPolicy, ResourceQuota, LimitRange, the
//     default ServiceAccount — so that it is put back at once, not at the next push;
//   - a change to another environment of its repository (above all a deletion), which may free a slot.
import { algorithmKind, databaseKind, ownershipLabelKeys, previewEnvironmentKind } from '../../constructs/index.js';
import type { Controller, EventFilter, KubeObject, Manager } from '../kube/index.js';
import { repositoryKey } from '../github/octokit-factory.js';
import { byEnvironment, guardCacheKinds, ingressKind, namespaceKind, repositoryIndex } from './preview-environment-caches.js';
import { withDefaults, type PreviewEnvironmentControllerOptions } from './preview-environment-options.js';
import { PreviewEnvironmentReconciler } from './preview-environment-reconciler.js';
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
  const namespaces = manager.informer(namespaceKind, byEnvironment);
  // Unfiltered: the same caches as the Algorithm and Database controllers' in one process.
  const algorithms = manager.informer(algorithmKind);
  const databases = manager.informer(databaseKind);
  const ingresses = manager.informer(ingressKind, byEnvironment);
  const guards = guardCacheKinds.map((kind) => manager.informer(kind, byEnvironment));
  const informers = { environments, namespaces, algorithms, databases, ingresses, guards };
  const settings = withDefaults(options);
  const reconciler = new PreviewEnvironmentReconciler(manager.client, informers, settings);
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
    ],
    reconciler,
    workers: settings.workers,
    resyncPeriodMs: settings.resyncPeriodMs,
  });
  return { controller };
}
