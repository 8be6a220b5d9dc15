// The Database controller's wiring: which informers it reads, which events wake it, how many
// workers run it. The reconcile itself is database-reconciler.ts; its status, database-status.ts.
import { databaseKind, databaseLabel } from '../../constructs/index.js';
import { generationChanged, type Manager } from '../kube/index.js';
import { DatabaseReconciler, type DatabaseControllerOptions } from './database-reconciler.js';
import { inTerminatingNamespace, namespaceInformerOptions, namespaceKind } from './namespace-terminating.js';

export { DatabaseReconciler, type DatabaseControllerOptions, type DatabaseInformers } from './database-reconciler.js';

/**
 * Registers the Database controller with `manager` (call before `manager.start()`). It
 * watches Databases and the StatefulSets, Services, ConfigMaps and Secrets labelled
 * `mycompany.com/database`, mapping each back to its controlling Database.
 */
export function registerDatabaseController(manager: Manager, options: DatabaseControllerOptions = {}): void {
  const owned = { namespace: options.namespace, labelSelector: databaseLabel };
  const databases = manager.informer(databaseKind, { namespace: options.namespace });
  const statefulSets = manager.informer({ apiVersion: 'apps/v1', kind: 'StatefulSet' }, owned);
  const services = manager.informer({ apiVersion: 'v1', kind: 'Service' }, owned);
  const secrets = manager.informer({ apiVersion: 'v1', kind: 'Secret' }, owned);
  const configMaps = manager.informer({ apiVersion: 'v1', kind: 'ConfigMap' }, owned);
  const namespaces = manager.informer(namespaceKind, namespaceInformerOptions(options.namespace));
  manager.addController({
    name: 'database',
    for: databases,
    // Status-only updates (our own writes) need no reconcile; spec changes and deletions do.
    filter: generationChanged,
    owns: [statefulSets, services, secrets, configMaps],
    ignore: inTerminatingNamespace(namespaces),
    reconciler: new DatabaseReconciler(manager.client, { databases, statefulSets, services, secrets, configMaps, namespaces }, options),
    workers: options.workers ?? 4,
    resyncPeriodMs: options.resyncPeriodMs,
  });
}
