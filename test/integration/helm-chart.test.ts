// The Helm chart: lint and template with the defaults and with every value set; every
// operator setting reaches the container and the operator's own loader accepts what the chart
// renders; the rendered chart applies to a real API server and its Deployment becomes available.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { loadConfig } from '../../src/config.js';
import { settings } from '../../src/config-settings.js';
import { serverSideApply, kubeRequest, type ManifestLike } from '../fixtures/crds/kube-apply.js';
import { chartDir, findObject, fullValuesFile, helm, renderChart } from '../fixtures/helm/render-chart.js';
import { createNamespace, testCluster, uniqueName } from '../support/test-cluster.js';
import { waitFor } from '../support/wait.js';

type Container = {
  name?: string;
  args?: string[];
  env?: { name: string; value?: string; valueFrom?: unknown }[];
  securityContext?: Record<string, unknown>;
  livenessProbe?: { httpGet?: { path: string } };
  readinessProbe?: { httpGet?: { path: string } };
  volumeMounts?: { name: string; mountPath: string }[];
  resources?: { requests?: Record<string, string>; limits?: Record<string, string> };
};
type PodSpec = {
  containers: Container[];
  securityContext?: Record<string, unknown>;
  volumes?: { name: string; emptyDir?: unknown; secret?: { secretName: string } }[];
  serviceAccountName?: string;
};
const podSpec = (deployment: ManifestLike) => (deployment.spec as { template: { spec: PodSpec } }).template.spec;
const envOf = (deployment: ManifestLike) => podSpec(deployment).containers[0]!.env ?? [];

test('helm lint passes with the defaults and with every value set', async () => {
  const defaults = await helm('lint', chartDir, '--strict');
  assert.match(defaults.stdout, /1 chart\(s\) linted, 0 chart\(s\) failed/);
  const full = await helm('lint', chartDir, '--strict', '-f', fullValuesFile);
  assert.match(full.stdout, /1 chart\(s\) linted, 0 chart\(s\) failed/);
});

test('the defaults: 2 replicas, non-root, read-only root with emptyDirs, probes, resources, least-privilege RBAC', async () => {
  const objects = await renderChart({ release: 'po', namespace: 'previews' });
  assert.deepEqual(objects.map((o) => o.kind).sort(), [
    'ClusterRole',
    'ClusterRole',
    'ClusterRole',
    'ClusterRoleBinding',
    'ConfigMap',
    'Deployment',
    'PodDisruptionBudget',
    'Role',
    'RoleBinding',
    'Service',
    'ServiceAccount',
    'ValidatingAdmissionPolicy',
    'ValidatingAdmissionPolicy',
    'ValidatingAdmissionPolicyBinding',
    'ValidatingAdmissionPolicyBinding',
  ]);
  const deployment = findObject(objects, 'Deployment');
  assert.equal((deployment.spec as { replicas: number }).replicas, 2);
  const spec = podSpec(deployment);
  const container = spec.containers[0]!;
  assert.deepEqual(container.args, ['run']);
  assert.equal(spec.securityContext?.runAsNonRoot, true);
  assert.equal(container.securityContext?.readOnlyRootFilesystem, true);
  assert.equal(container.securityContext?.allowPrivilegeEscalation, false);
  assert.deepEqual(container.securityContext?.capabilities, { drop: ['ALL'] });
  const mounts = new Map(container.volumeMounts!.map((m) => [m.mountPath, m.name]));
  for (const path of ['/tmp', '/var/cache/preview-operator']) {
    const volume = spec.volumes!.find((v) => v.name === mounts.get(path));
    assert.ok(volume?.emptyDir, `${path} must be a writable emptyDir`);
  }
  assert.equal(container.livenessProbe?.httpGet?.path, '/healthz');
  assert.equal(container.readinessProbe?.httpGet?.path, '/readyz');
  assert.ok(container.resources?.requests?.cpu && container.resources.limits?.memory);
  const env = new Map(envOf(deployment).map((e) => [e.name, e]));
  assert.ok(env.get('PREVIEW_OPERATOR_LEADER_ELECTION_NAMESPACE')?.valueFrom, 'the Lease lives in the release namespace');
  assert.equal(env.get('PREVIEW_OPERATOR_LEADER_ELECT')?.value, 'true');
  assert.equal(env.get('PREVIEW_OPERATOR_CHECKOUT_CACHE_DIR')?.value, '/var/cache/preview-operator/checkouts');

  for (const kind of ['ClusterRole', 'Role']) {
    for (const rule of (findObject(objects, kind) as { rules?: Record<string, string[]>[] }).rules ?? []) {
      for (const field of ['apiGroups', 'resources', 'verbs'])
        assert.ok(!rule[field]!.includes('*'), `${kind} rule ${JSON.stringify(rule)} has a wildcard`);
      assert.ok(!rule.verbs!.some((v) => ['escalate', 'bind', 'impersonate'].includes(v)), `${kind} grants ${rule.verbs}`);
    }
  }
  const clusterRole = findObject(objects, 'ClusterRole') as unknown as { rules: { resources: string[] }[] };
  assert.ok(!clusterRole.rules.some((r) => r.resources.includes('leases')), 'leases are granted by a Role in the release namespace only');
  assert.ok(!clusterRole.rules.some((r) => r.resources.includes('httproutes')), 'HTTPRoutes only when canary.traffic=httproute');
});

test('repository code runs in the renderer container, which holds no credentials', async () => {
  const objects = await renderChart({ release: 'po', namespace: 'previews' });
  const spec = podSpec(findObject(objects, 'Deployment')) as PodSpec & { automountServiceAccountToken?: boolean };
  const [operator, renderer] = spec.containers;
  assert.equal(renderer?.name, 'renderer');
  assert.equal(spec.automountServiceAccountToken, false, 'no token is mounted into every container');
  const mountsOf = (c: typeof operator) => new Map(c!.volumeMounts!.map((m) => [m.mountPath, m.name]));
  assert.equal(mountsOf(operator).get('/var/run/secrets/kubernetes.io/serviceaccount'), 'kube-api-access', 'the operator gets the token');
  const rendererMounts = mountsOf(renderer);
  assert.equal(rendererMounts.get('/var/run/secrets/kubernetes.io/serviceaccount'), undefined, 'the renderer gets no token');
  assert.deepEqual(
    [...rendererMounts.values()].sort(),
    ['checkout-cache', 'renderer-socket', 'renderer-tmp'],
    'no secret volume reaches the renderer',
  );
  assert.equal(
    renderer!.env!.some((e) => /TOKEN|SECRET|PRIVATE_KEY/.test(e.name)),
    false,
  );
  assert.deepEqual((renderer!.securityContext?.capabilities as { drop?: string[] } | undefined)?.drop, ['ALL']);
  assert.equal(renderer!.securityContext?.allowPrivilegeEscalation, false);
  const socket = renderer!.env!.find((e) => e.name === 'PREVIEW_OPERATOR_SANDBOX_RENDERER_SOCKET')?.value;
  assert.equal(envOf(findObject(objects, 'Deployment')).find((e) => e.name === 'PREVIEW_OPERATOR_SANDBOX_RENDERER_SOCKET')?.value, socket);

  const without = podSpec(
    findObject(await renderChart({ release: 'po', namespace: 'previews', set: ['sandbox.renderer.enabled=false'] }), 'Deployment'),
  );
  assert.deepEqual(
    without.containers.map((c) => c.name),
    ['operator'],
  );
});

test('every value set: every operator setting reaches the container, and the operator loads what the chart renders', async () => {
  const objects = await renderChart({ release: 'po', namespace: 'previews', valuesFiles: [fullValuesFile] });
  const deployment = findObject(objects, 'Deployment');
  const env = envOf(deployment);
  const names = new Set(env.map((e) => e.name));
  // Not set by the chart on purpose: the in-cluster identity needs no kubeconfig; secrets come
  // from files mounted from existing Secrets, never as values; the token (the fixture uses an App).
  const notFromChart = new Set([
    'KUBECONFIG',
    'PREVIEW_OPERATOR_CONTEXT',
    'PREVIEW_OPERATOR_WEBHOOK_SECRET',
    'PREVIEW_OPERATOR_GITHUB_TOKEN',
    'PREVIEW_OPERATOR_GITHUB_TOKEN_FILE',
  ]);
  const missing = settings.map((s) => s.env).filter((name) => !notFromChart.has(name) && !names.has(name));
  assert.deepEqual(missing, [], 'settings the chart cannot set');

  // Mounted files, as the kubelet would project them.
  const policy = (findObject(objects, 'ConfigMap', '-policy').data as Record<string, string>)['policy.yaml']!;
  const files: Record<string, string> = {
    '/etc/preview-operator/policy/policy.yaml': policy,
    '/etc/preview-operator/webhook/secret': 'webhook-secret-value\n',
    '/etc/preview-operator/github-app/key.pem': (await import('node:crypto'))
      .generateKeyPairSync('rsa', { modulusLength: 2048 })
      .privateKey.export({ type: 'pkcs1', format: 'pem' })
      .toString(),
  };
  const values = Object.fromEntries(env.filter((e) => e.value !== undefined).map((e) => [e.name, e.value!]));
  values.PREVIEW_OPERATOR_LEADER_ELECTION_NAMESPACE = 'previews';
  values.PREVIEW_OPERATOR_LEADER_ELECTION_IDENTITY = 'po-preview-operator-abc';
  const config = loadConfig({
    args: podSpec(deployment).containers[0]!.args!.slice(1),
    env: values,
    purpose: 'run',
    readFile: (path) => {
      if (path in files) return files[path]!;
      throw Object.assign(new Error(`ENOENT ${path}`), { code: 'ENOENT' });
    },
  });
  assert.equal(config.webhook.port, 8443);
  assert.equal(config.webhook.path, '/hooks/github');
  assert.equal(config.webhook.maxBodyBytes, 10485760);
  assert.equal(config.webhook.maxBodyBytesInFlight, 67108864);
  assert.deepEqual(config.webhook.secrets, ['webhook-secret-value']);
  assert.equal(config.github.auth?.type, 'app');
  assert.equal(config.github.baseUrl, 'https://github.example.com/api/v3');
  assert.equal(config.leaderElection.leaseName, 'previews-leader');
  assert.equal(config.policy.trust.approvalLabel, 'safe-to-preview');
  assert.equal(config.policy.budgets.ttl, '24h', "previews.defaultTtl overrides the policy's budgets.ttl");
  assert.equal(config.policy.budgets.maxEnvironmentsPerRepository, 5);
  assert.equal(config.policy.repositories['acme/shop']?.budgets?.maxEnvironmentsPerRepository, 2);
  assert.deepEqual(config.previews.tls, { issuer: { name: 'letsencrypt-staging', kind: 'Issuer' }, mode: 'wildcard' });
  assert.deepEqual(config.previews.tlsWildcardSecret, { namespace: 'previews', name: 'preview-wildcard' });
  const wildcard = findObject(objects, 'Certificate') as unknown as { metadata: { namespace: string }; spec: Record<string, unknown> };
  assert.equal(wildcard.metadata.namespace, 'previews', "the wildcard Certificate lives in the operator's namespace");
  assert.deepEqual(wildcard.spec.dnsNames, ['*.preview.example.com']);
  assert.deepEqual(wildcard.spec.issuerRef, { name: 'letsencrypt-staging', kind: 'Issuer', group: 'cert-manager.io' });
  assert.equal(config.canary.traffic, 'httproute');
  assert.equal(config.metrics.port, 9100);
  assert.deepEqual(config.dashboard, { enabled: true, port: 8088, host: '127.0.0.1' });
  const ports = (podSpec(deployment).containers[0] as { ports?: { name: string; containerPort: number }[] }).ports ?? [];
  assert.ok(
    ports.some((p) => p.name === 'dashboard' && p.containerPort === 8088),
    "the dashboard's container port",
  );
  assert.equal(config.resync.maxDeletionsPerPass, 20);

  const ingress = findObject(objects, 'Ingress') as unknown as { spec: { rules: { host: string; http: { paths: { path: string }[] } }[] } };
  assert.equal(ingress.spec.rules[0]!.host, 'hooks.example.com');
  assert.deepEqual(
    ingress.spec.rules[0]!.http.paths.map((p) => p.path),
    ['/hooks/github'],
    'only the webhook is exposed',
  );
  const clusterRole = findObject(objects, 'ClusterRole') as unknown as { rules: { resources: string[] }[] };
  assert.ok(clusterRole.rules.some((r) => r.resources.includes('httproutes')));
  assert.equal((findObject(objects, 'ServiceAccount').metadata as { name: string }).name, 'previews');

  const withToken = await renderChart({
    release: 'po',
    namespace: 'previews',
    set: ['github.token.existingSecret=gh-token', 'webhook.secret.existingSecret=hook'],
  });
  const tokenEnv = new Map(envOf(findObject(withToken, 'Deployment')).map((e) => [e.name, e.value]));
  assert.equal(tokenEnv.get('PREVIEW_OPERATOR_GITHUB_TOKEN_FILE'), '/etc/preview-operator/github-token/token');
});

test('values the schema refuses never render', async () => {
  await assert.rejects(helm('template', 'po', chartDir, '--set', 'controllers[0]=frontend'), /controllers\/0.*must be one of/s);
  await assert.rejects(helm('template', 'po', chartDir, '--set', 'leaderElection.leaseDuration=soon'), /leaseDuration/);
  await assert.rejects(helm('template', 'po', chartDir, '--set', 'ingress.enabled=true'), /ingress\.enabled needs ingress\.host/);
  await assert.rejects(
    helm('template', 'po', chartDir, '--set', 'previews.tlsMode=wildcard'),
    /creates a Certificate for \*\.<previews\.domain>: set previews\.domain/,
  );
  await assert.rejects(helm('template', 'po', chartDir, '--set', 'previews.tlsMode=shared'), /tlsMode.*must be one of/s);
});

test('the rendered chart applies to a real API server in a fresh namespace and its Deployment becomes available', async () => {
  const cluster = await testCluster();
  const kc = cluster.kubeConfig;
  const namespace = uniqueName('helm-apply');
  const release = uniqueName('po');
  await createNamespace(kc, namespace);
  // The Prometheus Operator's kinds have no CRDs here (helm-conventions.test.ts checks them); the
  // dashboard goes to the release namespace, the only one the test has.
  const set = ['priorityClassName=', 'metrics.grafanaDashboard.namespace='];
  const objects = (await renderChart({ release, namespace, valuesFiles: [fullValuesFile], set })).filter(
    (o) => !o.apiVersion.startsWith('monitoring.coreos.com/'),
  );
  try {
    for (const object of objects) await serverSideApply(kc, object, { fieldManager: 'helm-test', namespace });
    await waitFor(
      'the Deployment to have 3 available replicas',
      async () => {
        const live = (await kubeRequest(kc, 'GET', `/apis/apps/v1/namespaces/${namespace}/deployments/${release}-preview-operator`)) as {
          status?: { availableReplicas?: number };
        };
        return live.status?.availableReplicas === 3;
      },
      { timeoutMs: 60_000 },
    );
  } finally {
    for (const object of objects.filter((o) => o.kind === 'ClusterRole' || o.kind === 'ClusterRoleBinding')) {
      await kubeRequest(
        kc,
        'DELETE',
        `/apis/rbac.authorization.k8s.io/v1/${object.kind === 'ClusterRole' ? 'clusterroles' : 'clusterrolebindings'}/${object.metadata.name}`,
      ).catch(() => {});
    }
    await kubeRequest(kc, 'DELETE', `/api/v1/namespaces/${namespace}`).catch(() => {});
  }
});
