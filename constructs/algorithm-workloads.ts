import type { Chart } from 'cdk8s';
import { k8s } from 'cdk8s-plus-33';
import type { AlgorithmSpec } from './api-types.js';
import type { Manifest, OwnerReference } from './kube-object.js';
import { renderObjects } from './render-objects.js';
import { restrictedContainerSecurityContext, restrictedPodSecurityContext } from './restricted-security-context.js';

/** The label every object and pod of an algorithm carries: `ai.alien6.io/algorithm: <name>`. */
export const algorithmLabel = 'ai.alien6.io/algorithm';
/** `stable` or `canary`: which Deployment a pod belongs to. */
export const algorithmTrackLabel = 'ai.alien6.io/track';
/**
 * Set on an Algorithm by whoever also writes its `<name>-env` ConfigMap (the preview chart);
 * copied onto the pod template so that a change of env rolls the pods.
 */
export const envChecksumAnnotation = 'ai.alien6.io/env-checksum';
/** The per-pod custom metric the autoscaler targets when spec.scaling.targetLatencyMs is set. */
export const defaultLatencyMetric = 'request_latency_milliseconds';
/** The port the Service exposes (always 80, named `http`), whatever port the container listens on. */
export const algorithmServicePort = 80;

export type AlgorithmTrack = 'stable' | 'canary';

/** Names of what the renderer produces for the algorithm `name`. */
export function algorithmObjectNames(name: string) {
  return {
    /** The stable Deployment, the Service, the HPA and the PDB. */
    stable: name,
    service: name,
    autoscaler: name,
    disruptionBudget: name,
    canary: `${name}-canary`,
    /** The operator-written runtime configuration (ALGORITHM_* variables). */
    config: `${name}-config`,
    /** Optional user env, written by the preview chart; pods read it when it exists. */
    env: `${name}-env`,
  } as const;
}

/** The Algorithm as far as the renderer needs it (plain JSON from the API server will do). */
export interface AlgorithmInput {
  readonly metadata: {
    readonly name: string;
    readonly namespace?: string;
    readonly uid?: string;
    readonly annotations?: Readonly<Record<string, string>>;
  };
  readonly spec: AlgorithmSpec;
}

export interface ContainerResources {
  readonly requests?: Readonly<Record<string, string>>;
  readonly limits?: Readonly<Record<string, string>>;
}

export interface AlgorithmWorkloadOptions {
  /**
   * Replicas of the stable Deployment. `null` leaves `spec.replicas` out of the Deployment so
   * that the HorizontalPodAutoscaler alone owns it (no tug of war under server-side apply).
   * @default spec.replicas (1 when unset)
   */
  readonly stableReplicas?: number | null;
  /**
   * The image the stable track runs. During a rollout the stable track keeps the previous
   * image while spec.image is analysed as the canary.
   * @default spec.image
   */
  readonly stableImage?: string;
  /**
   * Run a canary Deployment `<name>-canary` beside the stable one, with a fixed number of
   * replicas (the autoscaler only ever scales the stable track).
   * @default - no canary
   */
  readonly canary?: { readonly image: string; readonly replicas: number };
  /**
   * The per-pod custom metric (in milliseconds) the autoscaler targets when
   * spec.scaling.targetLatencyMs is set. `null` when the custom metrics API is not available:
   * the autoscaler then falls back to CPU utilisation.
   * @default defaultLatencyMetric ('request_latency_milliseconds')
   */
  readonly latencyMetric?: string | null;
  /**
   * Target average CPU utilisation (percent of requests) for the CPU fallback.
   * @default 80
   */
  readonly cpuTargetUtilization?: number;
  /**
   * Whether a PodDisruptionBudget protects the pods where more than one can run. False in a
   * preview's namespace: its pods' readiness is the author's, and one pod kept unready beside a
   * ready one would have the budget refuse every eviction of the ready one, holding its node's drain.
   * @default true
   */
  readonly disruptionBudget?: boolean;
  /**
   * The port the algorithm's container listens on (HTTP).
   * @default 8080
   */
  readonly containerPort?: number;
  /**
   * CPU and memory of each container; GPUs come from spec.resources and are added to limits.
   * @default { requests: { cpu: '100m', memory: '128Mi' }, limits: { cpu: '1', memory: '512Mi' } }
   */
  readonly resources?: ContainerResources;
  /**
   * The uid/gid the container runs as (Pod Security `restricted` requires a non-root user;
   * a fixed one lets images whose USER is root or a name still start).
   * @default 65532
   */
  readonly runAsUser?: number;
  /**
   * Mount the root filesystem read-only (a writable emptyDir is mounted at /tmp).
   * @default true
   */
  readonly readOnlyRootFilesystem?: boolean;
  /**
   * HTTP path of the readiness probe. Without it readiness is a TCP connect to the port.
   * @default - TCP probe
   */
  readonly readinessPath?: string;
  /**
   * Extra labels on every rendered object (not on selectors).
   * @default - none
   */
  readonly labels?: Readonly<Record<string, string>>;
  /**
   * Owner references set on every rendered object; controllers pass
   * `[controllerReference(algorithm)]`.
   * @default - none
   */
  readonly ownerReferences?: readonly OwnerReference[];
}

const defaultResources = {
  requests: { cpu: '100m', memory: '128Mi' },
  limits: { cpu: '1', memory: '512Mi' },
} as const;

/** What every object of one Algorithm's rendering shares. */
interface WorkloadContext {
  algorithm: AlgorithmInput;
  options: AlgorithmWorkloadOptions;
  names: ReturnType<typeof algorithmObjectNames>;
  port: number;
  gpuCount: number;
  gpuResource: string;
  objectLabels: Record<string, string>;
}

function workloadContext(algorithm: AlgorithmInput, options: AlgorithmWorkloadOptions): WorkloadContext {
  const { name } = algorithm.metadata;
  return {
    algorithm,
    options,
    names: algorithmObjectNames(name),
    port: options.containerPort ?? 8080,
    gpuCount: algorithm.spec.resources?.gpuCount ?? 0,
    gpuResource: algorithm.spec.resources?.gpu ?? 'nvidia.com/gpu',
    objectLabels: {
      ...options.labels,
      'app.kubernetes.io/name': name,
      'app.kubernetes.io/component': 'algorithm',
      'app.kubernetes.io/managed-by': 'preview-operator',
      [algorithmLabel]: name,
    },
  };
}

function meta(ctx: WorkloadContext, objectName: string, extra: Record<string, string> = {}) {
  return { name: objectName, namespace: ctx.algorithm.metadata.namespace, labels: { ...ctx.objectLabels, ...extra } };
}

function quantities(values: Readonly<Record<string, string>>): Record<string, k8s.Quantity> {
  const out: Record<string, k8s.Quantity> = {};
  for (const [key, value] of Object.entries(values)) out[key] = k8s.Quantity.fromString(value);
  return out;
}

function containerResources(ctx: WorkloadContext): k8s.ResourceRequirements {
  const limits = quantities(ctx.options.resources?.limits ?? defaultResources.limits);
  if (ctx.gpuCount > 0) limits[ctx.gpuResource] = k8s.Quantity.fromString(String(ctx.gpuCount));
  return { requests: quantities(ctx.options.resources?.requests ?? defaultResources.requests), limits };
}

function readinessProbe(options: AlgorithmWorkloadOptions): k8s.Probe {
  const port = k8s.IntOrString.fromString('http');
  return options.readinessPath
    ? { httpGet: { path: options.readinessPath, port }, periodSeconds: 5, failureThreshold: 3 }
    : { tcpSocket: { port }, periodSeconds: 5, failureThreshold: 3 };
}

function algorithmContainer(ctx: WorkloadContext, track: AlgorithmTrack, image: string): k8s.Container {
  return {
    name: 'algorithm',
    image,
    imagePullPolicy: 'IfNotPresent',
    ports: [{ name: 'http', containerPort: ctx.port, protocol: 'TCP' }],
    // The user's env first: the operator's ALGORITHM_* values win on a clash.
    envFrom: [{ configMapRef: { name: ctx.names.env, optional: true } }, { configMapRef: { name: ctx.names.config } }],
    env: [{ name: 'ALGORITHM_TRACK', value: track }],
    resources: containerResources(ctx),
    readinessProbe: readinessProbe(ctx.options),
    securityContext: restrictedContainerSecurityContext(ctx.options.readOnlyRootFilesystem ?? true),
    volumeMounts: [{ name: 'tmp', mountPath: '/tmp' }],
  };
}

function podTemplate(ctx: WorkloadContext, selector: Record<string, string>, track: AlgorithmTrack, image: string): k8s.PodTemplateSpec {
  const envChecksum = ctx.algorithm.metadata.annotations?.[envChecksumAnnotation];
  return {
    metadata: {
      labels: { ...ctx.objectLabels, ...selector },
      annotations: {
        'kubectl.kubernetes.io/default-container': 'algorithm',
        ...(envChecksum ? { [envChecksumAnnotation]: envChecksum } : {}),
      },
    },
    spec: {
      automountServiceAccountToken: false,
      enableServiceLinks: false,
      securityContext: restrictedPodSecurityContext(ctx.options.runAsUser ?? 65532),
      tolerations: ctx.gpuCount > 0 ? [{ key: ctx.gpuResource, operator: 'Exists', effect: 'NoSchedule' }] : undefined,
      containers: [algorithmContainer(ctx, track, image)],
      volumes: [{ name: 'tmp', emptyDir: {} }],
    },
  };
}

function addDeployment(chart: Chart, ctx: WorkloadContext, track: AlgorithmTrack, image: string, replicas: number | undefined): void {
  const selector = { [algorithmLabel]: ctx.algorithm.metadata.name, [algorithmTrackLabel]: track };
  new k8s.KubeDeployment(chart, track, {
    metadata: meta(ctx, track === 'stable' ? ctx.names.stable : ctx.names.canary, { [algorithmTrackLabel]: track }),
    spec: {
      replicas,
      selector: { matchLabels: selector },
      revisionHistoryLimit: 3,
      // Surge instead of dropping a replica: a preview keeps serving during a rollout.
      strategy: {
        type: 'RollingUpdate',
        rollingUpdate: { maxSurge: k8s.IntOrString.fromNumber(1), maxUnavailable: k8s.IntOrString.fromNumber(0) },
      },
      template: podTemplate(ctx, selector, track, image),
    },
  });
}

function addConfigAndService(chart: Chart, ctx: WorkloadContext): void {
  const { name } = ctx.algorithm.metadata;
  const spec = ctx.algorithm.spec;
  const config: Record<string, string> = { ALGORITHM_NAME: name, ALGORITHM_PORT: String(ctx.port) };
  if (spec.scaling?.targetLatencyMs !== undefined) config.ALGORITHM_TARGET_LATENCY_MS = String(spec.scaling.targetLatencyMs);
  if (spec.lifecycle?.successThreshold !== undefined) config.ALGORITHM_SUCCESS_THRESHOLD = String(spec.lifecycle.successThreshold);
  new k8s.KubeConfigMap(chart, 'config', { metadata: meta(ctx, ctx.names.config), data: config });
  new k8s.KubeService(chart, 'service', {
    metadata: meta(ctx, ctx.names.service),
    spec: {
      type: 'ClusterIP',
      // Both tracks: with no mesh the canary's share of traffic is its share of replicas.
      selector: { [algorithmLabel]: name },
      ports: [{ name: 'http', port: algorithmServicePort, targetPort: k8s.IntOrString.fromString('http'), protocol: 'TCP' }],
    },
  });
}

function scalingMetric(ctx: WorkloadContext, targetLatencyMs: number | undefined): k8s.MetricSpecV2 {
  if (targetLatencyMs !== undefined && ctx.options.latencyMetric !== null) {
    return {
      type: 'Pods',
      pods: {
        metric: { name: ctx.options.latencyMetric ?? defaultLatencyMetric },
        target: { type: 'AverageValue', averageValue: k8s.Quantity.fromString(String(targetLatencyMs)) },
      },
    };
  }
  return {
    type: 'Resource',
    resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: ctx.options.cpuTargetUtilization ?? 80 } },
  };
}

function addAutoscaler(chart: Chart, ctx: WorkloadContext): void {
  const scaling = ctx.algorithm.spec.scaling;
  if (!scaling) return;
  new k8s.KubeHorizontalPodAutoscalerV2(chart, 'autoscaler', {
    metadata: meta(ctx, ctx.names.autoscaler),
    spec: {
      // The stable track only: a canary has fixed replicas, so one HPA never averages across both.
      scaleTargetRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: ctx.names.stable },
      minReplicas: scaling.minReplicas ?? 1,
      maxReplicas: scaling.maxReplicas,
      metrics: [scalingMetric(ctx, scaling.targetLatencyMs)],
    },
  });
}

/**
 * maxUnavailable 1 over a single pod allows what no budget allows (its eviction): a budget only
 * where two pods can run, so a one-replica preview costs no object or status writes. Unhealthy
 * pods may always be evicted (`AlwaysAllow`): under the default, pods an image keeps unready
 * would refuse every eviction and hold node drains up for as long as the preview lives.
 */
function addDisruptionBudget(chart: Chart, ctx: WorkloadContext, stableReplicas: number | undefined): void {
  if (ctx.options.disruptionBudget === false) return;
  const mostStablePods = Math.max(stableReplicas ?? 1, ctx.algorithm.spec.scaling?.maxReplicas ?? 1);
  if (mostStablePods + (ctx.options.canary?.replicas ?? 0) <= 1) return;
  new k8s.KubePodDisruptionBudget(chart, 'disruption-budget', {
    metadata: meta(ctx, ctx.names.disruptionBudget),
    spec: {
      maxUnavailable: k8s.IntOrString.fromNumber(1),
      selector: { matchLabels: { [algorithmLabel]: ctx.algorithm.metadata.name } },
      unhealthyPodEvictionPolicy: 'AlwaysAllow',
    },
  });
}

/**
 * Renders the workloads of an Algorithm: ConfigMap `<name>-config`, Service `<name>` (both
 * tracks), stable Deployment `<name>`, canary Deployment `<name>-canary` when asked,
 * HorizontalPodAutoscaler `<name>` (stable track only; only with spec.scaling) and
 * PodDisruptionBudget `<name>` (only where more than one pod can run). Pure and deterministic;
 * every pod passes Pod Security `restricted`.
 */
export function renderAlgorithmWorkloads(algorithm: AlgorithmInput, options: AlgorithmWorkloadOptions = {}): Manifest[] {
  const ctx = workloadContext(algorithm, options);
  return renderObjects((chart) => {
    addConfigAndService(chart, ctx);
    const stableReplicas = options.stableReplicas === null ? undefined : (options.stableReplicas ?? algorithm.spec.replicas ?? 1);
    addDeployment(chart, ctx, 'stable', options.stableImage ?? algorithm.spec.image, stableReplicas);
    if (options.canary) addDeployment(chart, ctx, 'canary', options.canary.image, options.canary.replicas);
    addAutoscaler(chart, ctx);
    addDisruptionBudget(chart, ctx, stableReplicas);
  }, options.ownerReferences);
}
