// The Algorithm controller's wiring: which informers it reads, which events wake it, how many
// workers run it. The reconcile itself is algorithm-reconciler.ts; its status, algorithm-status.ts.
import { algorithmKind, algorithmLabel, envChecksumAnnotation } from '../../constructs/index.js';
import { createdBy, type EventFilter, type KubeObject, type Manager } from '../kube/index.js';
import { AlgorithmReconciler, type AlgorithmControllerOptions } from './algorithm-reconciler.js';
import { inTerminatingNamespace, namespaceInformerOptions, namespaceKind } from './namespace-terminating.js';

export { AlgorithmReconciler, type AlgorithmControllerOptions, type AlgorithmInformers } from './algorithm-reconciler.js';
export { initialReplicasFieldManager } from './algorithm-apply.js';
export type { AlgorithmAnalysisOptions } from './algorithm-canary.js';

/** Algorithm events that warrant a reconcile: spec changes, the env checksum (rolls pods), deletion. */
export const algorithmChanged: EventFilter<KubeObject> = (e) =>
  e.type !== 'update' ||
  e.old?.metadata.generation !== e.object.metadata.generation ||
  e.old?.metadata.annotations?.[envChecksumAnnotation] !== e.object.metadata.annotations?.[envChecksumAnnotation] ||
  (!e.old?.metadata.deletionTimestamp && !!e.object.metadata.deletionTimestamp);

/**
 * Registers the Algorithm controller with `manager` (call before `manager.start()`). It
 * watches Algorithms and the Deployments, Services, HPAs, PDBs and ConfigMaps labelled
 * `ai.alien6.io/algorithm`, mapping each back to its controlling Algorithm — but not their creation
 * by this controller coming back (the reconcile that created one has acted on it), nor anything in
 * a namespace being deleted.
 */
export function registerAlgorithmController(manager: Manager, options: AlgorithmControllerOptions = {}): void {
  const informerOptions = { namespace: options.namespace };
  const owned = { ...informerOptions, labelSelector: algorithmLabel };
  const algorithms = manager.informer(algorithmKind, informerOptions);
  const deployments = manager.informer({ apiVersion: 'apps/v1', kind: 'Deployment' }, owned);
  const services = manager.informer({ apiVersion: 'v1', kind: 'Service' }, owned);
  const autoscalers = manager.informer({ apiVersion: 'autoscaling/v2', kind: 'HorizontalPodAutoscaler' }, owned);
  const budgets = manager.informer({ apiVersion: 'policy/v1', kind: 'PodDisruptionBudget' }, owned);
  const configMaps = manager.informer({ apiVersion: 'v1', kind: 'ConfigMap' }, owned);
  const namespaces = manager.informer(namespaceKind, namespaceInformerOptions(options.namespace));
  const informers = { algorithms, deployments, services, autoscalers, budgets, configMaps, namespaces };
  const reconciler = new AlgorithmReconciler(manager.client, informers, options);
  const [terminating, ownCreation] = [inTerminatingNamespace(namespaces), createdBy(manager.client.fieldManager)];
  manager.addController({
    name: 'algorithm',
    for: algorithms,
    filter: algorithmChanged,
    owns: [deployments, services, autoscalers, budgets, configMaps],
    ignore: (obj, event) => terminating(obj) || ownCreation(obj, event),
    reconciler,
    workers: options.workers ?? 4,
    resyncPeriodMs: options.resyncPeriodMs,
  });
}
