import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { App } from 'cdk8s';
import { k8s } from 'cdk8s-plus-33';
import { stringify } from 'yaml';
import {
  Algorithm,
  PreviewEnvironmentChart,
  previewHostname,
  type Manifest,
  type PreviewConfig,
  type PreviewEnvironmentChartProps,
  type PreviewIdentity,
} from './index.js';

const identity: PreviewIdentity = {
  environment: 'pr-42-reco-5f1d2c',
  repository: { owner: 'alien6', name: 'reco' },
  pullRequest: 42,
  sha: '5f1d2c0b9a8e7d6c5b4a39281706f5e4d3c2b1a0',
  namespace: 'pr-42-reco-5f1d2c',
  host: 'reco-pr-42.preview.alien6.io',
};

const config: PreviewConfig = {
  version: 1,
  env: { LOG_LEVEL: 'debug', SHARED: 'from-config' },
  resources: { cpu: '16', memory: '32Gi', storage: '20Gi', gpu: 4, pods: 40 },
  algorithms: [
    {
      name: 'recommendation-engine',
      image: 'registry.alien6.io/algo/reco:2.1.4',
      replicas: 1,
      resources: { gpu: 'nvidia.com/gpu', gpuCount: 2 },
      scaling: { minReplicas: 1, maxReplicas: 2, targetLatencyMs: 50 },
      lifecycle: { canaryWeight: 20, successThreshold: 0.99, rollbackOnDrift: true },
      env: { SHARED: 'from-algorithm', MODEL: 'v2' },
    },
    { name: 'ranking-api', image: 'registry.alien6.io/algo/ranking-api:1.8.0', replicas: 2, path: '/api' },
    { name: 'batch', image: 'registry.alien6.io/algo/batch:1.0.0', expose: false },
  ],
  databases: [{ name: 'myapp-db', engine: 'postgresql', version: '16', storage: '5Gi' }],
};

function render(props: Partial<PreviewEnvironmentChartProps> = {}, extend?: (chart: PreviewEnvironmentChart) => void): Manifest[] {
  const chart = new PreviewEnvironmentChart(new App(), 'preview', { config, identity, ...props });
  extend?.(chart);
  return chart.toJson();
}

function find(objects: Manifest[], kind: string, name: string): any {
  const found = objects.find((o) => o.kind === kind && o.metadata.name === name);
  assert.ok(found, `no ${kind} ${name} among ${objects.map((o) => `${o.kind}/${o.metadata.name}`).join(', ')}`);
  return found;
}

describe('PreviewEnvironmentChart', () => {
  const objects = render();

  it('renders the namespace first, then the algorithms, databases, certificate and ingress', () => {
    assert.deepEqual(
      objects.map((o) => `${o.kind}/${o.metadata.name}`),
      [
        'Namespace/pr-42-reco-5f1d2c',
        'ResourceQuota/preview-quota',
        'LimitRange/preview-defaults',
        'NetworkPolicy/preview-isolation',
        'ServiceAccount/default',
        'Algorithm/recommendation-engine',
        'ConfigMap/recommendation-engine-env',
        'Algorithm/ranking-api',
        'ConfigMap/ranking-api-env',
        'Algorithm/batch',
        'ConfigMap/batch-env',
        'Database/myapp-db',
        'Certificate/preview-tls',
        'Ingress/preview',
      ],
    );
  });

  it('puts the ownership labels and the repository annotation on every object, all in the namespace', () => {
    for (const object of objects) {
      assert.equal(object.metadata.labels?.['app.kubernetes.io/managed-by'], 'preview-operator', object.metadata.name);
      assert.equal(object.metadata.labels?.['preview.alien6.io/environment'], 'pr-42-reco-5f1d2c', object.metadata.name);
      assert.equal(object.metadata.labels?.['preview.alien6.io/pull-request'], '42', object.metadata.name);
      assert.equal(object.metadata.annotations?.['preview.alien6.io/repository'], 'alien6/reco', object.metadata.name);
      if (object.kind === 'Namespace') assert.equal('namespace' in object.metadata, false, 'a Namespace is cluster-scoped');
      else assert.equal(object.metadata.namespace, 'pr-42-reco-5f1d2c', `${object.kind}/${object.metadata.name}`);
    }
  });

  it('labels the Namespace for Pod Security restricted and records the commit', () => {
    const ns = find(objects, 'Namespace', 'pr-42-reco-5f1d2c');
    for (const mode of ['enforce', 'warn', 'audit']) {
      assert.equal(ns.metadata.labels[`pod-security.kubernetes.io/${mode}`], 'restricted');
      assert.equal(ns.metadata.labels[`pod-security.kubernetes.io/${mode}-version`], 'latest');
    }
    assert.equal(ns.metadata.annotations['preview.alien6.io/sha'], identity.sha);
    const baseline = find(render({ podSecurity: 'baseline' }), 'Namespace', 'pr-42-reco-5f1d2c');
    assert.equal(baseline.metadata.labels['pod-security.kubernetes.io/enforce'], 'baseline');
  });

  it("budgets the namespace from the configuration's resources, with container defaults", () => {
    assert.deepEqual(find(objects, 'ResourceQuota', 'preview-quota').spec.hard, {
      'limits.cpu': '16',
      'limits.memory': '32Gi',
      'requests.storage': '20Gi',
      persistentvolumeclaims: '10',
      pods: '40',
      'requests.nvidia.com/gpu': '4',
      'services.loadbalancers': '0',
      'services.nodeports': '0',
    });
    const defaults = render({ config: { algorithms: [] } });
    assert.deepEqual(find(defaults, 'ResourceQuota', 'preview-quota').spec.hard, {
      'limits.cpu': '8',
      'limits.memory': '16Gi',
      'requests.storage': '100Gi',
      persistentvolumeclaims: '10',
      pods: '50',
      'services.loadbalancers': '0',
      'services.nodeports': '0',
    });
    assert.deepEqual(find(objects, 'LimitRange', 'preview-defaults').spec.limits, [
      {
        type: 'Container',
        defaultRequest: { cpu: '100m', memory: '128Mi' },
        default: { cpu: '500m', memory: '512Mi' },
      },
    ]);
  });

  it("renders the namespace's default ServiceAccount without token automount (pods that mention none run as it)", () => {
    const account = find(objects, 'ServiceAccount', 'default');
    assert.equal(account.automountServiceAccountToken, false);
    assert.equal(account.metadata.namespace, 'pr-42-reco-5f1d2c');
  });

  it('denies all traffic but same-namespace, the ingress controller and DNS', () => {
    assert.deepEqual(find(objects, 'NetworkPolicy', 'preview-isolation').spec, {
      podSelector: {},
      policyTypes: ['Ingress', 'Egress'],
      ingress: [
        { from: [{ podSelector: {} }] },
        { from: [{ namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'ingress-nginx' } } }] },
      ],
      egress: [
        { to: [{ podSelector: {} }] },
        {
          to: [
            {
              namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'kube-system' } },
              podSelector: { matchLabels: { 'k8s-app': 'kube-dns' } },
            },
          ],
          ports: [
            { protocol: 'UDP', port: 53 },
            { protocol: 'TCP', port: 53 },
          ],
        },
      ],
    });
    const traefik = find(
      render({
        ingressController: {
          namespaceLabels: { 'kubernetes.io/metadata.name': 'traefik' },
          podLabels: { 'app.kubernetes.io/name': 'traefik' },
        },
      }),
      'NetworkPolicy',
      'preview-isolation',
    );
    assert.deepEqual(traefik.spec.ingress[1], {
      from: [
        {
          namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'traefik' } },
          podSelector: { matchLabels: { 'app.kubernetes.io/name': 'traefik' } },
        },
      ],
    });
  });

  it('declares each algorithm with exactly the Algorithm spec fields, and its env in a ConfigMap', () => {
    const algorithm = find(objects, 'Algorithm', 'recommendation-engine');
    assert.equal(algorithm.apiVersion, 'ai.alien6.io/v1');
    assert.deepEqual(algorithm.spec, {
      image: 'registry.alien6.io/algo/reco:2.1.4',
      replicas: 1,
      resources: { gpu: 'nvidia.com/gpu', gpuCount: 2 },
      scaling: { minReplicas: 1, maxReplicas: 2, targetLatencyMs: 50 },
      lifecycle: { canaryWeight: 20, successThreshold: 0.99, rollbackOnDrift: true },
    });
    // The configuration's env, then the algorithm's (it wins).
    assert.deepEqual(find(objects, 'ConfigMap', 'recommendation-engine-env').data, {
      LOG_LEVEL: 'debug',
      SHARED: 'from-algorithm',
      MODEL: 'v2',
    });
    assert.match(algorithm.metadata.annotations['ai.alien6.io/env-checksum'], /^[0-9a-f]{14}$/);
    assert.deepEqual(find(objects, 'Algorithm', 'ranking-api').spec, { image: 'registry.alien6.io/algo/ranking-api:1.8.0', replicas: 2 });
  });

  it('changes the env checksum exactly when the env changes', () => {
    const checksum = (objs: Manifest[]) => find(objs, 'Algorithm', 'ranking-api').metadata.annotations['ai.alien6.io/env-checksum'];
    const reordered = render({ config: { ...config, env: { SHARED: 'from-config', LOG_LEVEL: 'debug' } } });
    const changed = render({ config: { ...config, env: { ...config.env, LOG_LEVEL: 'info' } } });
    assert.equal(checksum(reordered), checksum(objects));
    assert.notEqual(checksum(changed), checksum(objects));
  });

  it('applies overrides: images per algorithm, env over everything', () => {
    const overridden = render({
      overrides: { images: { 'ranking-api': 'registry.alien6.io/algo/ranking-api:pr-42' }, env: { SHARED: 'from-override' } },
    });
    assert.equal(find(overridden, 'Algorithm', 'ranking-api').spec.image, 'registry.alien6.io/algo/ranking-api:pr-42');
    assert.equal(find(overridden, 'Algorithm', 'recommendation-engine').spec.image, 'registry.alien6.io/algo/reco:2.1.4');
    assert.equal(find(overridden, 'ConfigMap', 'recommendation-engine-env').data.SHARED, 'from-override');
  });

  it('declares each database', () => {
    const database = find(objects, 'Database', 'myapp-db');
    assert.equal(database.apiVersion, 'mycompany.com/v1');
    assert.deepEqual(database.spec, { engine: 'postgresql', version: '16', storage: '5Gi', replicas: 1 });
  });

  it("serves the host over TLS from the Certificate's Secret, routing exposed algorithms", () => {
    const certificate = find(objects, 'Certificate', 'preview-tls');
    assert.deepEqual(certificate.spec, {
      secretName: 'preview-tls',
      commonName: 'reco-pr-42.preview.alien6.io',
      dnsNames: ['reco-pr-42.preview.alien6.io'],
      duration: '720h',
      renewBefore: '240h',
      issuerRef: { name: 'preview-issuer', kind: 'ClusterIssuer', group: 'cert-manager.io' },
      privateKey: { algorithm: 'ECDSA', size: 256, rotationPolicy: 'Always' },
    });
    assert.deepEqual(find(objects, 'Ingress', 'preview').spec, {
      ingressClassName: 'nginx',
      tls: [{ hosts: ['reco-pr-42.preview.alien6.io'], secretName: 'preview-tls' }],
      rules: [
        {
          host: 'reco-pr-42.preview.alien6.io',
          http: {
            paths: [
              { path: '/', pathType: 'Prefix', backend: { service: { name: 'recommendation-engine', port: { number: 80 } } } },
              { path: '/api', pathType: 'Prefix', backend: { service: { name: 'ranking-api', port: { number: 80 } } } },
            ],
          },
        },
      ],
    });
  });

  it('takes the issuer and ingress class from its options, or serves plain HTTP without a Certificate', () => {
    const custom = render({ ingressClassName: 'traefik', tls: { issuer: { name: 'letsencrypt-staging', kind: 'Issuer' } } });
    assert.deepEqual(find(custom, 'Certificate', 'preview-tls').spec.issuerRef, {
      name: 'letsencrypt-staging',
      kind: 'Issuer',
      group: 'cert-manager.io',
    });
    assert.equal(find(custom, 'Ingress', 'preview').spec.ingressClassName, 'traefik');
    const chart = new PreviewEnvironmentChart(new App(), 'preview', { config, identity, tls: false });
    const plain = chart.toJson();
    assert.equal(
      plain.some((o) => o.kind === 'Certificate'),
      false,
    );
    assert.equal(find(plain, 'Ingress', 'preview').spec.tls, undefined);
    assert.equal(chart.url, 'http://reco-pr-42.preview.alien6.io');
    assert.equal(new PreviewEnvironmentChart(new App(), 'preview', { config, identity }).url, 'https://reco-pr-42.preview.alien6.io');
  });

  it('renders no Ingress or Certificate when nothing is exposed', () => {
    const quiet = render({ config: { algorithms: [{ name: 'batch', image: 'batch:1', expose: false }] } });
    assert.deepEqual(
      quiet.map((o) => o.kind),
      ['Namespace', 'ResourceQuota', 'LimitRange', 'NetworkPolicy', 'ServiceAccount', 'Algorithm'],
    );
  });

  it("labels what a repository's main.ts adds, routes it, and keeps ownership labels authoritative", () => {
    const extended = render({}, (chart) => {
      const worker = new Algorithm(chart, 'worker', { name: 'worker', image: 'worker:1', env: { ROLE: 'worker' } });
      chart.addRoute('/worker', worker);
      new k8s.KubeConfigMap(chart, 'fixtures', {
        metadata: { name: 'fixtures', labels: { 'preview.alien6.io/environment': 'someone-else', team: 'ranking' } },
        data: { 'a.txt': 'a' },
      });
    });
    const fixtures = find(extended, 'ConfigMap', 'fixtures');
    assert.equal(fixtures.metadata.namespace, 'pr-42-reco-5f1d2c');
    assert.equal(fixtures.metadata.labels['preview.alien6.io/environment'], 'pr-42-reco-5f1d2c');
    assert.equal(fixtures.metadata.labels.team, 'ranking');
    assert.equal(find(extended, 'Algorithm', 'worker').metadata.labels['preview.alien6.io/pull-request'], '42');
    assert.deepEqual(
      find(extended, 'Ingress', 'preview').spec.rules[0].http.paths.map((p: { path: string }) => p.path),
      ['/', '/api', '/worker'],
    );
  });

  it('refuses to route one path twice', () => {
    const chart = new PreviewEnvironmentChart(new App(), 'preview', { config, identity });
    assert.throws(() => chart.addRoute('/api', { name: 'other', port: 80 }), /path \/api is already routed/);
  });

  it('exposes its parts to main.ts', () => {
    const chart = new PreviewEnvironmentChart(new App(), 'preview', { config, identity });
    assert.deepEqual([...chart.algorithms.keys()], ['recommendation-engine', 'ranking-api', 'batch']);
    assert.deepEqual(chart.algorithms.get('ranking-api')?.service, { name: 'ranking-api', port: 80 });
    const db = chart.databases.get('myapp-db')!;
    assert.equal(db.endpoint, 'myapp-db.pr-42-reco-5f1d2c.svc.cluster.local');
    assert.equal(db.credentialsSecretName, 'myapp-db-credentials');
    assert.deepEqual([db.host, db.readOnlyHost, db.port], ['myapp-db', 'myapp-db-ro', 5432]);
    assert.equal(chart.certificate?.secretName, 'preview-tls');
    assert.equal(chart.ingress?.host, identity.host);
    assert.deepEqual(chart.context, { identity, config });
  });

  it('is deterministic: the same props give byte-identical YAML', () => {
    const yaml = () =>
      render()
        .map((o) => stringify(o))
        .join('---\n');
    assert.equal(yaml(), yaml());
  });
});

describe('previewHostname', () => {
  it('is <prefix>-pr-<n>-<repository hash>.<domain>, the prefix defaulting to a DNS-safe repository name', () => {
    assert.equal(
      previewHostname({
        hostPrefix: 'reco',
        repositoryName: 'reco',
        repositoryHash: '893ec0bf3acd',
        pullRequest: 42,
        domain: 'preview.alien6.io',
      }),
      'reco-pr-42-893ec0bf3acd.preview.alien6.io',
    );
    assert.equal(
      previewHostname({ repositoryName: 'My_Repo.js', repositoryHash: '9871f013b53c', pullRequest: 7, domain: 'p.example' }),
      'my-repo-js-pr-7-9871f013b53c.p.example',
    );
  });

  it('keeps the first label within 63 characters', () => {
    const host = previewHostname({
      repositoryName: 'a'.repeat(100),
      repositoryHash: 'cfcdae9164dd',
      pullRequest: 123456,
      domain: 'p.example',
    });
    const label = host.split('.')[0]!;
    assert.equal(label.length, 63);
    assert.match(label, /^a+-pr-123456-cfcdae9164dd$/);
  });
});
