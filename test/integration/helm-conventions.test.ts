// The chart as Helm, Prometheus and Grafana users expect it: inconsistent values fail the render with
// what to change; a parent chart's `global:` passes the schema; a chart version bump alone restarts
// no pod; ServiceMonitor, PrometheusRule (its alerts run through promtool on synthetic series), the
// Grafana dashboard and the NetworkPolicy render when enabled and name only series the operator
// exports; the aggregated view/edit ClusterRoles reach Kubernetes' own roles on a real API server.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { cp, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { after, test } from 'node:test';
import { promisify } from 'node:util';
import { parse, stringify } from 'yaml';
import { OperatorMetrics } from '../../src/server/metrics.js';
import { kubeRequest, serverSideApply, type ManifestLike } from '../fixtures/crds/kube-apply.js';
import { chartDir, findObject, helm, renderChart } from '../fixtures/helm/render-chart.js';
import { createNamespace, testCluster, uniqueName } from '../support/test-cluster.js';
import { waitFor } from '../support/wait.js';

const run = promisify(execFile);
const tmp = await mkdtemp(path.join(os.tmpdir(), 'helm-conventions-'));
after(() => rm(tmp, { recursive: true, force: true }));

const template = (...set: string[]) => helm('template', 'po', chartDir, ...set.flatMap((s) => ['--set', s]));
const annotationsOf = (deployment: ManifestLike) =>
  (deployment.spec as { template: { metadata: { annotations: Record<string, string> } } }).template.metadata.annotations;

test('inconsistent values fail the render with what to change', async () => {
  const cases: [string[], RegExp][] = [
    [
      ['replicaCount=3', 'leaderElection.enabled=false'],
      /replicaCount is 3 but leaderElection\.enabled is false.*Set leaderElection\.enabled=true, or replicaCount=1/,
    ],
    [['github.app.privateKey.existingSecret=app-key'], /github\.app\.privateKey\.existingSecret is "app-key" but github\.app\.id is empty/],
    [['github.app.id=123'], /github\.app\.id is 123 but github\.app\.privateKey\.existingSecret is empty/],
    [['github.app.installationId=7'], /github\.app\.installationId is set but github\.app\.id is empty/],
    [
      ['github.app.id=1', 'github.app.privateKey.existingSecret=k', 'github.token.existingSecret=t'],
      /both a GitHub App .* and a token .* choose one/,
    ],
    [['sandbox.maxHeapMb=512', 'sandbox.maxRssMb=512'], /sandbox\.maxRssMb \(512\) must be larger than sandbox\.maxHeapMb \(512\)/],
    [
      ['leaderElection.leaseDuration=1.5m', 'leaderElection.renewDeadline=1m30s'],
      /leaseDuration \(1\.5m\) must be longer than leaderElection\.renewDeadline \(1m30s\)/,
    ],
    [['leaderElection.retryPeriod=10s'], /renewDeadline \(10s\) must be longer than leaderElection\.retryPeriod \(10s\)/],
    [['drainTimeout=40s'], /terminationGracePeriodSeconds \(40\) must be longer than drainTimeout \(40s\) plus the 5 s preStop pause/],
    [['webhook.path=/metrics'], /webhook\.path \/metrics is taken by the operator itself/],
  ];
  for (const [set, message] of cases) await assert.rejects(template(...set), message, set.join(' '));
  // What stays allowed: several webhook-only replicas need no leader; durations compare by value.
  await template('replicaCount=3', 'leaderElection.enabled=false', 'controllers={webhook}');
  await template(
    'leaderElection.leaseDuration=1m31s',
    'leaderElection.renewDeadline=1.5m',
    'github.app.id=1',
    'github.app.privateKey.existingSecret=k',
  );
});

test("a parent chart's global values pass the schema", async () => {
  const parent = path.join(tmp, 'platform');
  await mkdir(path.join(parent, 'charts'), { recursive: true });
  await writeFile(
    path.join(parent, 'Chart.yaml'),
    stringify({
      apiVersion: 'v2',
      name: 'platform',
      version: '1.0.0',
      dependencies: [{ name: 'preview-operator', version: '>=0.0.0-0', repository: 'file://charts/preview-operator' }],
    }),
  );
  await writeFile(
    path.join(parent, 'values.yaml'),
    stringify({ global: { imageRegistry: 'registry.example.com', imagePullSecrets: ['pull'] } }),
  );
  await cp(chartDir, path.join(parent, 'charts', 'preview-operator'), { recursive: true });
  const { stdout } = await helm('template', 'platform', parent);
  assert.match(stdout, /kind: Deployment/);
});

test('the pods restart when the policy changes, not when only the chart version does', async () => {
  const bumped = path.join(tmp, 'bumped');
  await cp(chartDir, bumped, { recursive: true });
  const chartFile = path.join(bumped, 'Chart.yaml');
  await writeFile(chartFile, (await readFile(chartFile, 'utf8')).replace(/^version: .*$/m, 'version: 9.9.9'));
  const render = async (dir: string, set: string[] = []) => {
    const { stdout } = await helm('template', 'po', dir, '--namespace', 'previews', ...set.flatMap((s) => ['--set', s]));
    const deployment = stdout
      .split(/^---$/m)
      .map((d) => parse(d) as ManifestLike | null)
      .find((d) => d?.kind === 'Deployment')!;
    return annotationsOf(deployment)['checksum/policy'];
  };
  const original = await render(chartDir);
  assert.match(original!, /^[0-9a-f]{64}$/);
  assert.equal(await render(bumped), original, 'a chart version bump alone must not restart the pods');
  assert.notEqual(await render(chartDir, ['policy.trust.approvalLabel=ok-to-preview']), original, 'a policy change restarts them');
});

/** Every `preview_operator_*`, `process_*` and `nodejs_*` series an expression names. */
function seriesNames(expressions: string[]): Set<string> {
  return new Set(expressions.flatMap((e) => [...e.matchAll(/\b(?:preview_operator|process|nodejs)_[a-z0-9_]+\b/g)].map((m) => m[0])));
}

/** The series the operator exports (histograms as their _bucket, _sum and _count). */
async function exportedSeries(): Promise<Set<string>> {
  const metrics = await new OperatorMetrics().registry.getMetricsAsJSON();
  return new Set(
    metrics.flatMap((m) => (String(m.type) === 'histogram' ? ['_bucket', '_sum', '_count'].map((s) => `${m.name}${s}`) : [m.name])),
  );
}

type Rule = { alert?: string; expr: string; for?: string; labels?: Record<string, string>; annotations?: Record<string, string> };

test('monitoring renders only when enabled: ServiceMonitor, PrometheusRule, Grafana dashboard', async () => {
  const defaults = await renderChart({ release: 'po', namespace: 'previews' });
  for (const kind of ['ServiceMonitor', 'PrometheusRule', 'NetworkPolicy'])
    assert.ok(!defaults.some((o) => o.kind === kind), `${kind} is off by default`);
  assert.ok(!defaults.some((o) => o.metadata.name.endsWith('-dashboard')));

  const set = ['metrics.serviceMonitor.enabled=true', 'metrics.prometheusRule.enabled=true', 'metrics.grafanaDashboard.enabled=true'];
  const objects = await renderChart({ release: 'po', namespace: 'previews', set });
  const monitor = findObject(objects, 'ServiceMonitor') as ManifestLike & {
    spec: { endpoints: { port: string; path: string }[]; namespaceSelector: unknown };
  };
  assert.deepEqual(
    monitor.spec.endpoints.map((e) => [e.port, e.path]),
    [['metrics', '/metrics']],
  );
  assert.deepEqual(monitor.spec.namespaceSelector, { matchNames: ['previews'] });
  const service = findObject(objects, 'Service') as ManifestLike & { spec: { ports: { name: string }[] } };
  assert.ok(
    service.spec.ports.some((p) => p.name === 'metrics'),
    'the ServiceMonitor names a port the Service has',
  );
  const samePort = await renderChart({ release: 'po', namespace: 'previews', set: [...set, 'metrics.port=8080'] });
  assert.equal((findObject(samePort, 'ServiceMonitor').spec as { endpoints: { port: string }[] }).endpoints[0]!.port, 'http');

  const dashboard = findObject(objects, 'ConfigMap', '-dashboard');
  const labels = (dashboard.metadata as { labels?: Record<string, string> }).labels;
  assert.equal(labels?.grafana_dashboard, '1', 'the Grafana sidecar finds it by this label');
  const json = JSON.parse((dashboard.data as Record<string, string>)['preview-operator.json']!) as {
    uid: string;
    panels: { title: string; targets: { expr: string }[] }[];
    templating: { list: { name: string; type: string }[] };
  };
  assert.equal(json.uid, 'preview-operator');
  assert.ok(
    json.templating.list.some((v) => v.name === 'datasource' && v.type === 'datasource'),
    'no data source is hard-wired',
  );
  assert.ok(json.panels.length >= 10);

  const rules = (findObject(objects, 'PrometheusRule').spec as { groups: { rules: Rule[] }[] }).groups.flatMap((g) => g.rules);
  assert.deepEqual(rules.map((r) => r.alert).sort(), [
    'PreviewEnvironmentStuck',
    'PreviewOperatorAbsent',
    'PreviewOperatorGitHubRateLimitLow',
    'PreviewOperatorNoLeader',
    'PreviewOperatorReconcileErrors',
    'PreviewOperatorResyncFailing',
    'PreviewOperatorWebhookErrors',
    'PreviewOperatorWebhookSignatureRejected',
    'PreviewOperatorWebhookWritesFailing',
  ]);
  const exported = await exportedSeries();
  const named = seriesNames([...rules.map((r) => r.expr), ...json.panels.flatMap((p) => p.targets.map((t) => t.expr))]);
  assert.deepEqual(
    [...named].filter((n) => !exported.has(n)),
    [],
    'series the operator does not export',
  );
  for (const name of [
    'preview_operator_webhook_deliveries_total',
    'preview_operator_reconcile_errors_total',
    'preview_operator_github_rate_limit_remaining',
    'preview_operator_environment_age_seconds',
  ])
    assert.ok(named.has(name), `${name} is alerted on or shown`);
});

/** One promtool unit-test case: these series make `alert` fire at `at` with these labels. */
type AlertCase = { alert: string; series: Record<string, string>; at: string; labels: Record<string, string> };

const ns = 'namespace="previews"';
const firing: AlertCase[] = [
  {
    alert: 'PreviewOperatorAbsent',
    series: { 'preview_operator_leader{namespace="elsewhere"}': '1x30' },
    at: '15m',
    labels: { namespace: 'previews' },
  },
  {
    alert: 'PreviewOperatorNoLeader',
    series: { [`preview_operator_leader{${ns},pod="a"}`]: '0x30', [`preview_operator_leader{${ns},pod="b"}`]: '0x30' },
    at: '10m',
    labels: {},
  },
  {
    alert: 'PreviewOperatorWebhookErrors',
    at: '30m',
    labels: {},
    series: {
      [`preview_operator_webhook_deliveries_total{${ns},event="pull_request",result="accepted",status="202"}`]: '0+10x40',
      [`preview_operator_webhook_deliveries_total{${ns},event="pull_request",result="failed",status="500"}`]: '0+2x40',
    },
  },
  {
    alert: 'PreviewOperatorWebhookSignatureRejected',
    at: '30m',
    labels: {},
    series: {
      [`preview_operator_webhook_deliveries_total{${ns},event="pull_request",result="accepted",status="202"}`]: '0+10x40',
      [`preview_operator_webhook_deliveries_total{${ns},event="unknown",result="unauthorized",status="401"}`]: '0+5x40',
    },
  },
  {
    alert: 'PreviewOperatorWebhookWritesFailing',
    at: '30m',
    labels: {},
    series: { [`preview_operator_webhook_writes_total{${ns},op="upsert",result="failed"}`]: '0+1x40' },
  },
  {
    alert: 'PreviewOperatorReconcileErrors',
    at: '40m',
    labels: { controller: 'algorithm' },
    series: {
      [`preview_operator_reconciles_total{${ns},controller="algorithm",outcome="success"}`]: '0+5x60',
      [`preview_operator_reconciles_total{${ns},controller="algorithm",outcome="error"}`]: '0+5x60',
      [`preview_operator_reconcile_errors_total{${ns},controller="algorithm"}`]: '0+5x60',
    },
  },
  {
    alert: 'PreviewOperatorGitHubRateLimitLow',
    at: '20m',
    labels: { client: 'installation-7', resource: 'core' },
    series: {
      [`preview_operator_github_rate_limit_remaining{${ns},client="installation-7",resource="core"}`]: '100x40',
      [`preview_operator_github_rate_limit_reset_timestamp_seconds{${ns},client="installation-7",resource="core"}`]: '3600x40',
    },
  },
  {
    alert: 'PreviewEnvironmentStuck',
    at: '40m',
    labels: { environment: 'pr-1-shop-0a1b2c', phase: 'Deploying' },
    series: { [`preview_operator_environment_age_seconds{${ns},environment="pr-1-shop-0a1b2c",phase="Deploying"}`]: '0+60x60' },
  },
  {
    alert: 'PreviewOperatorResyncFailing',
    at: '40m',
    labels: {},
    series: { [`preview_operator_resync_passes_total{${ns},result="errors"}`]: '0+1x60' },
  },
];
const healthy: Record<string, string> = {
  [`preview_operator_leader{${ns},pod="a"}`]: '1x60',
  [`preview_operator_webhook_deliveries_total{${ns},event="pull_request",result="accepted",status="202"}`]: '0+10x60',
  [`preview_operator_webhook_writes_total{${ns},op="upsert",result="upserted"}`]: '0+10x60',
  [`preview_operator_reconciles_total{${ns},controller="algorithm",outcome="success"}`]: '0+10x60',
  [`preview_operator_reconcile_errors_total{${ns},controller="algorithm"}`]: '0x60',
  [`preview_operator_github_rate_limit_remaining{${ns},client="installation-7",resource="core"}`]: '4000x60',
  [`preview_operator_github_rate_limit_reset_timestamp_seconds{${ns},client="installation-7",resource="core"}`]: '3600x60',
  [`preview_operator_environment_age_seconds{${ns},environment="pr-1-shop-0a1b2c",phase="Ready"}`]: '0+60x60',
  [`preview_operator_resync_passes_total{${ns},result="clean"}`]: '0+1x60',
};

test('the alerts are valid rules and fire on the series they are about, and only then (promtool)', async () => {
  const objects = await renderChart({ release: 'po', namespace: 'previews', set: ['metrics.prometheusRule.enabled=true'] });
  const spec = findObject(objects, 'PrometheusRule').spec as { groups: { name: string; rules: Rule[] }[] };
  const rulesFile = path.join(tmp, 'rules.yaml');
  await writeFile(rulesFile, stringify(spec));
  const checked = await run('promtool', ['check', 'rules', rulesFile]);
  assert.match(checked.stdout, /SUCCESS: 9 rules found/);

  // promtool compares annotations too; their templates were checked above, the firing is tested here.
  const bare = { groups: spec.groups.map((g) => ({ ...g, rules: g.rules.map(({ annotations: _, ...rule }) => rule) })) };
  await writeFile(path.join(tmp, 'bare-rules.yaml'), stringify(bare));
  const toSeries = (s: Record<string, string>) => Object.entries(s).map(([series, values]) => ({ series, values }));
  const tests = [
    ...firing.map((c) => ({
      interval: '1m',
      input_series: toSeries(c.series),
      alert_rule_test: [{ eval_time: c.at, alertname: c.alert, exp_alerts: [{ exp_labels: { ...c.labels, severity: 'warning' } }] }],
    })),
    {
      interval: '1m',
      input_series: toSeries(healthy),
      alert_rule_test: firing.map((c) => ({ eval_time: '50m', alertname: c.alert, exp_alerts: [] })),
    },
  ];
  const testFile = path.join(tmp, 'rules.test.yaml');
  await writeFile(testFile, stringify({ rule_files: ['bare-rules.yaml'], evaluation_interval: '1m', tests }));
  const result = await run('promtool', ['test', 'rules', testFile]).catch((err: { stdout?: string; stderr?: string }) => {
    throw new Error(`promtool test rules failed:\n${err.stdout ?? ''}${err.stderr ?? ''}`);
  });
  assert.match(result.stdout, /SUCCESS/);
});

test('the NetworkPolicy admits the webhook and the scrapes, and reaches DNS, the API server, GitHub and Prometheus', async () => {
  type Port = { port: number; protocol: string };
  type NetworkPolicy = {
    spec: { policyTypes: string[]; ingress: { ports: Port[]; from?: unknown[] }[]; egress: { ports?: Port[]; to?: unknown[] }[] };
  };
  const objects = await renderChart({
    release: 'po',
    namespace: 'previews',
    set: ['networkPolicy.enabled=true', 'canary.prometheusUrl=http://prometheus.monitoring.svc:9091'],
  });
  const { spec } = findObject(objects, 'NetworkPolicy') as ManifestLike & NetworkPolicy;
  assert.deepEqual(spec.policyTypes, ['Ingress', 'Egress']);
  assert.deepEqual(
    spec.ingress.map((r) => [r.ports.map((p) => p.port), r.from === undefined]),
    [
      [[8080], true],
      [[9090], false],
    ],
    'the webhook from anywhere, the metrics from the monitoring namespace',
  );
  const egressPorts = spec.egress.map((r) => r.ports!.map((p) => `${p.port}/${p.protocol}`));
  assert.deepEqual(egressPorts, [['53/UDP', '53/TCP'], ['443/TCP', '6443/TCP'], ['443/TCP'], ['9091/TCP']]);

  const { stdout } = await template('networkPolicy.enabled=true');
  assert.doesNotMatch(stdout, /Prometheus, for canary analysis/, 'no Prometheus rule without canary.prometheusUrl');
});

test('aggregated roles: viewers see Algorithms and Databases, editors edit them, none writes a PreviewEnvironment', async () => {
  const cluster = await testCluster();
  const admin = cluster.kubeConfig;
  const release = uniqueName('po');
  const namespace = uniqueName('helm-aggregate');
  const roles = (await renderChart({ release, namespace })).filter(
    (o) => o.kind === 'ClusterRole' && /-(view|edit)$/.test(o.metadata.name),
  );
  assert.deepEqual(
    roles.map((r) => r.metadata.name),
    [`${release}-preview-operator-view`, `${release}-preview-operator-edit`],
  );
  const [viewer, editor, clusterEditor] = ['viewer', 'editor', 'cluster-editor'].map((who) => `${who}-${release}`);
  const binding = (name: string, role: string, user: string) => ({
    apiVersion: 'rbac.authorization.k8s.io/v1',
    metadata: { name },
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: role },
    subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: user }],
  });
  await createNamespace(admin, namespace);
  try {
    for (const role of roles) await serverSideApply(admin, role, { fieldManager: 'helm-test' });
    await serverSideApply(admin, { kind: 'RoleBinding', ...binding('viewer', 'view', viewer) }, { fieldManager: 'helm-test', namespace });
    await serverSideApply(admin, { kind: 'RoleBinding', ...binding('editor', 'edit', editor) }, { fieldManager: 'helm-test', namespace });
    await serverSideApply(
      admin,
      { kind: 'ClusterRoleBinding', ...binding(clusterEditor, 'edit', clusterEditor) },
      { fieldManager: 'helm-test' },
    );
    const may = async (user: string, verb: string, group: string, resource: string, inNamespace = true) => {
      const review = (await kubeRequest(admin, 'POST', '/apis/authorization.k8s.io/v1/subjectaccessreviews', {
        apiVersion: 'authorization.k8s.io/v1',
        kind: 'SubjectAccessReview',
        spec: {
          user,
          groups: ['system:authenticated'],
          resourceAttributes: { verb, group, resource, ...(inNamespace ? { namespace } : {}) },
        },
      })) as { status: { allowed: boolean } };
      return review.status.allowed;
    };
    // Kubernetes' aggregation controller copies the rules into view, edit and admin.
    await waitFor(
      "the view and edit roles to aggregate the chart's rules",
      async () => (await may(viewer, 'list', 'mycompany.com', 'databases')) && (await may(editor, 'create', 'ai.alien6.io', 'algorithms')),
      { timeoutMs: 30_000 },
    );
    const table: [string, string, string, string, boolean, boolean][] = [
      [viewer, 'get', 'ai.alien6.io', 'algorithms', true, true],
      [viewer, 'watch', 'mycompany.com', 'databases', true, true],
      [viewer, 'create', 'ai.alien6.io', 'algorithms', true, false],
      [viewer, 'delete', 'mycompany.com', 'databases', true, false],
      [editor, 'patch', 'ai.alien6.io', 'algorithms', true, true],
      [editor, 'delete', 'mycompany.com', 'databases', true, true],
      [editor, 'list', 'preview.alien6.io', 'previewenvironments', false, false], // cluster-scoped: a RoleBinding never reaches it
      [clusterEditor, 'list', 'preview.alien6.io', 'previewenvironments', false, true],
      [clusterEditor, 'delete', 'preview.alien6.io', 'previewenvironments', false, true],
      [clusterEditor, 'create', 'preview.alien6.io', 'previewenvironments', false, false],
      [clusterEditor, 'patch', 'preview.alien6.io', 'previewenvironments', false, false],
    ];
    const wrong: string[] = [];
    for (const [user, verb, group, resource, inNamespace, expected] of table) {
      if ((await may(user, verb, group, resource, inNamespace)) !== expected)
        wrong.push(`${user.split('-po-')[0]} ${verb} ${resource}: expected ${expected ? 'allowed' : 'denied'}`);
    }
    assert.deepEqual(wrong, []);
  } finally {
    for (const role of roles)
      await kubeRequest(admin, 'DELETE', `/apis/rbac.authorization.k8s.io/v1/clusterroles/${role.metadata.name}`).catch(() => {});
    await kubeRequest(admin, 'DELETE', `/apis/rbac.authorization.k8s.io/v1/clusterrolebindings/${clusterEditor}`).catch(() => {});
    await kubeRequest(admin, 'DELETE', `/api/v1/namespaces/${namespace}`).catch(() => {});
  }
});
