import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { stringify } from 'yaml';
import { controllerReference, renderAlgorithmWorkloads, type AlgorithmInput, type Manifest } from './index.js';

// The seed `recommendation-engine-v2`, as the API server hands it to the controller.
const seed: AlgorithmInput = {
  metadata: { name: 'recommendation-engine-v2', namespace: 'team-a', uid: '6f1c1e0a-0000-4000-8000-000000000001' },
  spec: {
    image: 'registry.alien6.io/algo/reco:2.1.4',
    replicas: 3,
    resources: { gpu: 'nvidia.com/gpu', gpuCount: 2 },
    scaling: { minReplicas: 1, maxReplicas: 10, targetLatencyMs: 50 },
    lifecycle: { canaryWeight: 20, successThreshold: 0.99, rollbackOnDrift: true },
  },
};

function find(objects: Manifest[], kind: string, name: string): any {
  const found = objects.find((o) => o.kind === kind && o.metadata.name === name);
  assert.ok(found, `no ${kind} ${name} among ${objects.map((o) => `${o.kind}/${o.metadata.name}`).join(', ')}`);
  return found;
}

describe('renderAlgorithmWorkloads', () => {
  const objects = renderAlgorithmWorkloads(seed);

  it("renders ConfigMap, Service, stable Deployment, HPA and PDB, in apply order, in the algorithm's namespace", () => {
    assert.deepEqual(
      objects.map((o) => `${o.apiVersion} ${o.kind} ${o.metadata.name}`),
      [
        'v1 ConfigMap recommendation-engine-v2-config',
        'v1 Service recommendation-engine-v2',
        'apps/v1 Deployment recommendation-engine-v2',
        'autoscaling/v2 HorizontalPodAutoscaler recommendation-engine-v2',
        'policy/v1 PodDisruptionBudget recommendation-engine-v2',
      ],
    );
    for (const object of objects) {
      assert.equal(object.metadata.namespace, 'team-a');
      assert.equal(object.metadata.labels?.['ai.alien6.io/algorithm'], 'recommendation-engine-v2');
      assert.equal(object.metadata.labels?.['app.kubernetes.io/managed-by'], 'preview-operator');
      assert.equal(
        object.metadata.labels?.['preview.alien6.io/environment'],
        undefined,
        'workloads must never look like preview-owned objects',
      );
      assert.equal(object.metadata.ownerReferences, undefined, "owner references are the controller's call");
    }
  });

  it('runs the stable Deployment with 3 replicas, the image, and nvidia.com/gpu: 2 in the limits', () => {
    const deployment = find(objects, 'Deployment', 'recommendation-engine-v2');
    assert.equal(deployment.spec.replicas, 3);
    assert.deepEqual(deployment.spec.selector, {
      matchLabels: { 'ai.alien6.io/algorithm': 'recommendation-engine-v2', 'ai.alien6.io/track': 'stable' },
    });
    assert.deepEqual(deployment.spec.strategy, { type: 'RollingUpdate', rollingUpdate: { maxSurge: 1, maxUnavailable: 0 } });
    const pod = deployment.spec.template;
    assert.equal(pod.metadata.labels['ai.alien6.io/track'], 'stable');
    assert.equal(pod.metadata.labels['ai.alien6.io/algorithm'], 'recommendation-engine-v2');
    const [container] = pod.spec.containers;
    assert.equal(pod.spec.containers.length, 1);
    assert.equal(container.name, 'algorithm');
    assert.equal(container.image, 'registry.alien6.io/algo/reco:2.1.4');
    assert.deepEqual(container.ports, [{ name: 'http', containerPort: 8080, protocol: 'TCP' }]);
    assert.deepEqual(container.resources, {
      requests: { cpu: '100m', memory: '128Mi' },
      limits: { cpu: '1', memory: '512Mi', 'nvidia.com/gpu': '2' },
    });
    assert.deepEqual(pod.spec.tolerations, [{ key: 'nvidia.com/gpu', operator: 'Exists', effect: 'NoSchedule' }]);
    assert.deepEqual(container.envFrom, [
      { configMapRef: { name: 'recommendation-engine-v2-env', optional: true } },
      { configMapRef: { name: 'recommendation-engine-v2-config' } },
    ]);
    assert.deepEqual(container.env, [{ name: 'ALGORITHM_TRACK', value: 'stable' }]);
    assert.deepEqual(container.readinessProbe, { tcpSocket: { port: 'http' }, periodSeconds: 5, failureThreshold: 3 });
  });

  it('meets Pod Security restricted: non-root, RuntimeDefault seccomp, no escalation, no capabilities', () => {
    const pod = find(objects, 'Deployment', 'recommendation-engine-v2').spec.template.spec;
    assert.deepEqual(pod.securityContext, {
      runAsNonRoot: true,
      runAsUser: 65532,
      runAsGroup: 65532,
      fsGroup: 65532,
      fsGroupChangePolicy: 'OnRootMismatch',
      seccompProfile: { type: 'RuntimeDefault' },
    });
    assert.deepEqual(pod.containers[0].securityContext, {
      allowPrivilegeEscalation: false,
      capabilities: { drop: ['ALL'] },
      readOnlyRootFilesystem: true,
      runAsNonRoot: true,
    });
    assert.deepEqual(pod.containers[0].volumeMounts, [{ name: 'tmp', mountPath: '/tmp' }]);
    assert.deepEqual(pod.volumes, [{ name: 'tmp', emptyDir: {} }]);
    assert.equal(pod.automountServiceAccountToken, false);
  });

  it('exposes both tracks on port 80 of a Service named after the algorithm', () => {
    const service = find(objects, 'Service', 'recommendation-engine-v2');
    assert.deepEqual(service.spec, {
      type: 'ClusterIP',
      selector: { 'ai.alien6.io/algorithm': 'recommendation-engine-v2' },
      ports: [{ name: 'http', port: 80, targetPort: 'http', protocol: 'TCP' }],
    });
  });

  it('autoscales the stable Deployment 1..10 on the per-pod latency metric (50 ms)', () => {
    const hpa = find(objects, 'HorizontalPodAutoscaler', 'recommendation-engine-v2');
    assert.deepEqual(hpa.spec, {
      scaleTargetRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: 'recommendation-engine-v2' },
      minReplicas: 1,
      maxReplicas: 10,
      metrics: [
        { type: 'Pods', pods: { metric: { name: 'request_latency_milliseconds' }, target: { type: 'AverageValue', averageValue: '50' } } },
      ],
    });
    const custom = renderAlgorithmWorkloads(seed, { latencyMetric: 'p95_latency_ms' });
    assert.equal(find(custom, 'HorizontalPodAutoscaler', 'recommendation-engine-v2').spec.metrics[0].pods.metric.name, 'p95_latency_ms');
  });

  it('falls back to CPU when the custom metrics API is unavailable (latencyMetric: null)', () => {
    const hpa = find(
      renderAlgorithmWorkloads(seed, { latencyMetric: null, cpuTargetUtilization: 70 }),
      'HorizontalPodAutoscaler',
      'recommendation-engine-v2',
    );
    assert.deepEqual(hpa.spec.metrics, [
      { type: 'Resource', resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: 70 } } },
    ]);
  });

  it('protects the algorithm with a PDB over both tracks and configures it through a ConfigMap', () => {
    assert.deepEqual(find(objects, 'PodDisruptionBudget', 'recommendation-engine-v2').spec, {
      maxUnavailable: 1,
      selector: { matchLabels: { 'ai.alien6.io/algorithm': 'recommendation-engine-v2' } },
      unhealthyPodEvictionPolicy: 'AlwaysAllow',
    });
    assert.deepEqual(find(objects, 'ConfigMap', 'recommendation-engine-v2-config').data, {
      ALGORITHM_NAME: 'recommendation-engine-v2',
      ALGORITHM_PORT: '8080',
      ALGORITHM_SUCCESS_THRESHOLD: '0.99',
      ALGORITHM_TARGET_LATENCY_MS: '50',
    });
  });

  it('runs a canary beside the stable track: own selector, fixed replicas, not targeted by the HPA', () => {
    const rollout = renderAlgorithmWorkloads(seed, {
      stableImage: 'registry.alien6.io/algo/reco:2.1.3',
      canary: { image: 'registry.alien6.io/algo/reco:2.1.4', replicas: 1 },
    });
    const stable = find(rollout, 'Deployment', 'recommendation-engine-v2');
    const canary = find(rollout, 'Deployment', 'recommendation-engine-v2-canary');
    assert.equal(stable.spec.template.spec.containers[0].image, 'registry.alien6.io/algo/reco:2.1.3');
    assert.equal(canary.spec.template.spec.containers[0].image, 'registry.alien6.io/algo/reco:2.1.4');
    assert.equal(canary.spec.replicas, 1);
    assert.deepEqual(canary.spec.selector.matchLabels, {
      'ai.alien6.io/algorithm': 'recommendation-engine-v2',
      'ai.alien6.io/track': 'canary',
    });
    assert.equal(canary.metadata.labels['ai.alien6.io/track'], 'canary');
    assert.deepEqual(canary.spec.template.spec.containers[0].env, [{ name: 'ALGORITHM_TRACK', value: 'canary' }]);
    assert.equal(find(rollout, 'HorizontalPodAutoscaler', 'recommendation-engine-v2').spec.scaleTargetRef.name, 'recommendation-engine-v2');
    // The Service selects both tracks, so the canary's share of replicas is its share of traffic.
    assert.deepEqual(find(rollout, 'Service', 'recommendation-engine-v2').spec.selector, {
      'ai.alien6.io/algorithm': 'recommendation-engine-v2',
    });
  });

  it('leaves stable replicas to the HPA when asked (stableReplicas: null)', () => {
    const stable = find(renderAlgorithmWorkloads(seed, { stableReplicas: null }), 'Deployment', 'recommendation-engine-v2');
    assert.equal('replicas' in stable.spec, false);
    assert.equal(find(renderAlgorithmWorkloads(seed, { stableReplicas: 7 }), 'Deployment', 'recommendation-engine-v2').spec.replicas, 7);
  });

  it('renders no HPA, GPU, tolerations or PDB for one replica without scaling or GPUs', () => {
    const plain = renderAlgorithmWorkloads({ metadata: { name: 'api', namespace: 'team-a' }, spec: { image: 'api:1' } });
    assert.deepEqual(
      plain.map((o) => o.kind),
      ['ConfigMap', 'Service', 'Deployment'],
    );
    const pod = find(plain, 'Deployment', 'api').spec.template.spec;
    assert.equal(find(plain, 'Deployment', 'api').spec.replicas, 1);
    assert.equal(pod.tolerations, undefined);
    assert.deepEqual(pod.containers[0].resources.limits, { cpu: '1', memory: '512Mi' });
  });

  it("renders the PDB only where more than one pod can run: replicas, the HPA's maximum or a canary beside one stable pod", () => {
    const one = { metadata: { name: 'api', namespace: 'team-a' }, spec: { image: 'api:1' } };
    const hasBudget = (objects: Manifest[]) => objects.some((o) => o.kind === 'PodDisruptionBudget');
    assert.equal(hasBudget(renderAlgorithmWorkloads(one)), false);
    assert.equal(hasBudget(renderAlgorithmWorkloads({ ...one, spec: { image: 'api:1', replicas: 2 } })), true);
    assert.equal(
      hasBudget(renderAlgorithmWorkloads({ ...one, spec: { image: 'api:1', scaling: { minReplicas: 1, maxReplicas: 1 } } })),
      false,
    );
    assert.equal(
      hasBudget(
        renderAlgorithmWorkloads(
          { ...one, spec: { image: 'api:1', scaling: { minReplicas: 1, maxReplicas: 3 } } },
          { stableReplicas: null },
        ),
      ),
      true,
    );
    assert.equal(hasBudget(renderAlgorithmWorkloads(one, { canary: { image: 'api:2', replicas: 1 } })), true);
  });

  it('copies the env checksum annotation onto pods, so an env change rolls them', () => {
    const withEnv = renderAlgorithmWorkloads({
      ...seed,
      metadata: { ...seed.metadata, annotations: { 'ai.alien6.io/env-checksum': 'abc123', unrelated: 'x' } },
    });
    const annotations = find(withEnv, 'Deployment', 'recommendation-engine-v2').spec.template.metadata.annotations;
    assert.deepEqual(annotations, { 'kubectl.kubernetes.io/default-container': 'algorithm', 'ai.alien6.io/env-checksum': 'abc123' });
  });

  it('sets the owner references it is given on every object', () => {
    const owner = controllerReference({
      apiVersion: 'ai.alien6.io/v1',
      kind: 'Algorithm',
      metadata: { name: seed.metadata.name, uid: seed.metadata.uid! },
    });
    const owned = renderAlgorithmWorkloads(seed, { ownerReferences: [owner], canary: { image: 'x:2', replicas: 1 } });
    for (const object of owned) {
      assert.deepEqual(object.metadata.ownerReferences, [
        {
          apiVersion: 'ai.alien6.io/v1',
          kind: 'Algorithm',
          name: 'recommendation-engine-v2',
          uid: '6f1c1e0a-0000-4000-8000-000000000001',
          controller: true,
          blockOwnerDeletion: true,
        },
      ]);
    }
  });

  it('applies options: port, resources, user, readiness path, extra labels', () => {
    const custom = renderAlgorithmWorkloads(seed, {
      containerPort: 9000,
      resources: { requests: { cpu: '2', memory: '4Gi' }, limits: { cpu: '4', memory: '8Gi' } },
      runAsUser: 1000,
      readOnlyRootFilesystem: false,
      readinessPath: '/ready',
      labels: { team: 'ranking' },
    });
    const deployment = find(custom, 'Deployment', 'recommendation-engine-v2');
    const container = deployment.spec.template.spec.containers[0];
    assert.equal(container.ports[0].containerPort, 9000);
    assert.deepEqual(container.resources.limits, { cpu: '4', memory: '8Gi', 'nvidia.com/gpu': '2' });
    assert.equal(deployment.spec.template.spec.securityContext.runAsUser, 1000);
    assert.equal(container.securityContext.readOnlyRootFilesystem, false);
    assert.deepEqual(container.readinessProbe.httpGet, { path: '/ready', port: 'http' });
    assert.equal(deployment.metadata.labels.team, 'ranking');
    assert.equal(deployment.spec.selector.matchLabels.team, undefined, 'extra labels never enter selectors');
  });

  it('is deterministic: rendering twice gives byte-identical YAML', () => {
    const once = renderAlgorithmWorkloads(seed, { canary: { image: 'x:2', replicas: 1 } })
      .map((o) => stringify(o))
      .join('---\n');
    const twice = renderAlgorithmWorkloads(structuredClone(seed), { canary: { image: 'x:2', replicas: 1 } })
      .map((o) => stringify(o))
      .join('---\n');
    assert.equal(once, twice);
  });
});
