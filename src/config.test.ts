import assert from 'node:assert/strict';
import { generateKeyPairSync } from 'node:crypto';
import { test } from 'node:test';
import { ConfigError, loadConfig, type LoadConfigOptions } from './config.js';
import { settings } from './config-settings.js';

const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
const pem = privateKey.export({ type: 'pkcs1', format: 'pem' }).toString();

const files: Record<string, string> = {
  '/secrets/webhook': 'first-secret\nsecond-secret\n',
  '/secrets/app.pem': pem,
  '/secrets/token': 'ghp_example\n',
  '/secrets/empty': '\n',
  '/config/policy.yaml':
    'filters:\n  labels:\n    anyOf: [preview]\nbudgets:\n  ttl: 48h\nrepositories:\n  acme/shop:\n    budgets:\n      maxEnvironmentsPerRepository: 3\n',
  '/config/bad-policy.yaml': 'filters:\n  skipDrafts: sometimes\nbudgets:\n  ttl: 10s\nrepositorie: {}\n',
  '/config/not-yaml.yaml': 'filters: [unclosed\n',
};
const readFile = (path: string) => {
  if (path in files) return files[path]!;
  throw Object.assign(new Error(`ENOENT: ${path}`), { code: 'ENOENT' });
};

function load(args: string[], env: Record<string, string> = {}, purpose: LoadConfigOptions['purpose'] = 'run') {
  return loadConfig({ args, env, purpose, readFile });
}

function issuesOf(fn: () => unknown): string[] {
  try {
    fn();
  } catch (err) {
    assert.ok(err instanceof ConfigError, String(err));
    return err.issues.map((i) => `${i.setting}: ${i.message}`);
  }
  assert.fail('expected a ConfigError');
}

const minimal = ['--webhook-secret-file=/secrets/webhook', '--github-token-file=/secrets/token', '--preview-domain=preview.example.com'];

test('defaults, files and flags make a complete configuration', () => {
  const config = load(minimal, {}, 'run');
  assert.deepEqual(config.controllers, ['algorithm', 'database', 'preview-environment', 'webhook', 'resync']);
  assert.deepEqual(config.webhook.secrets, ['first-secret', 'second-secret']);
  assert.equal(config.webhook.port, 8080);
  assert.equal(config.webhook.path, '/api/github/webhooks');
  assert.equal(config.webhook.maxBodyBytes, 1024 * 1024);
  assert.equal(config.webhook.maxBodyBytesInFlight, 32 * 1024 * 1024);
  assert.equal(config.webhook.dedupeWindowMs, 3_600_000);
  assert.deepEqual(config.github.auth, { type: 'token', token: 'ghp_example' });
  assert.equal(config.github.baseUrl, 'https://api.github.com');
  assert.equal(config.leaderElection.enabled, true);
  assert.equal(config.leaderElection.leaseName, 'preview-operator');
  assert.equal(config.leaderElection.leaseDurationMs, 15_000);
  assert.ok(config.leaderElection.identity.length > 0);
  assert.equal(config.policy.budgets.ttl, '72h');
  assert.deepEqual(config.previews.tls, { issuer: { name: 'preview-issuer', kind: 'ClusterIssuer' }, mode: 'per-preview' });
  assert.equal(config.previews.tlsWildcardSecret, undefined);
  assert.deepEqual(config.git.allowedProtocols, ['https:']);
  assert.equal(config.resync.intervalMs, 300_000);
  assert.equal(config.metrics.port, 9090);
});

test('TLS modes: the wildcard ones name the Secret of the certificate for *.<domain>, and serve TLS', () => {
  const wildcard = load([...minimal, '--tls-mode=wildcard', '--tls-wildcard-secret=preview-operator/preview-wildcard-tls']);
  assert.deepEqual(wildcard.previews.tls, { issuer: { name: 'preview-issuer', kind: 'ClusterIssuer' }, mode: 'wildcard' });
  assert.deepEqual(wildcard.previews.tlsWildcardSecret, { namespace: 'preview-operator', name: 'preview-wildcard-tls' });
  const fromEnv = load(minimal, {
    PREVIEW_OPERATOR_TLS_MODE: 'ingress-default',
    PREVIEW_OPERATOR_TLS_WILDCARD_SECRET: 'ingress-nginx/wildcard',
  });
  assert.equal(fromEnv.previews.tls && fromEnv.previews.tls.mode, 'ingress-default');
  const problems = (args: string[]) => issuesOf(() => load([...minimal, ...args]));
  assert.match(problems(['--tls-mode=wildcard']).join('\n'), /^--tls-wildcard-secret .*: required by --tls-mode=wildcard/);
  assert.match(problems(['--tls-mode=shared']).join('\n'), /^--tls-mode .*must be one of: per-preview, wildcard, ingress-default/);
  assert.match(
    problems(['--tls-mode=wildcard', '--tls-wildcard-secret=wildcard-tls']).join('\n'),
    /"wildcard-tls" is not <namespace>\/<name>/,
  );
  assert.match(problems(['--tls-wildcard-secret=ns/wildcard']).join('\n'), /used only with --tls-mode=wildcard or ingress-default/);
  const off = problems(['--tls-issuer=none', '--tls-mode=wildcard', '--tls-wildcard-secret=ns/wildcard']);
  assert.match(off.join('\n'), /^--tls-mode .*--tls-issuer=none plain HTTP/);
});

test('a flag wins over the environment, and the environment over the default', () => {
  const config = load([...minimal, '--webhook-port=9000'], {
    PREVIEW_OPERATOR_WEBHOOK_PORT: '7000',
    PREVIEW_OPERATOR_METRICS_PORT: '9100',
    PREVIEW_OPERATOR_CONTROLLERS: 'algorithm, database',
    KUBECONFIG: '/home/me/.kube/config',
  });
  assert.equal(config.webhook.port, 9000);
  assert.equal(config.metrics.port, 9100);
  assert.deepEqual(config.controllers, ['algorithm', 'database']);
  assert.equal(config.kube.kubeconfig, '/home/me/.kube/config');
});

test('Algorithm and Database controllers alone need neither GitHub, nor a webhook secret, nor a domain', () => {
  const config = load(['--controllers=algorithm,database', '--leader-elect=false']);
  assert.equal(config.github.auth, undefined);
  assert.deepEqual(config.webhook.secrets, []);
  assert.equal(config.leaderElection.enabled, false);
});

test('a GitHub App from id and key file, the policy file merged with the budget flags', () => {
  const config = load([
    '--webhook-secret=s3cret',
    '--github-app-id',
    '12345',
    '--github-app-private-key-file=/secrets/app.pem',
    '--github-app-installation-id=99',
    '--preview-domain=preview.example.com',
    '--policy-file=/config/policy.yaml',
    '--max-environments-per-repository=5',
    '--tls-issuer=none',
  ]);
  assert.deepEqual(config.github.auth, { type: 'app', appId: 12345, privateKey: pem, installationId: 99 });
  assert.deepEqual(config.webhook.secrets, ['s3cret']);
  assert.deepEqual(config.policy.filters.labels.anyOf, ['preview']);
  assert.equal(config.policy.budgets.ttl, '48h', "the file's TTL stays when --default-ttl is not given");
  assert.equal(config.policy.budgets.maxEnvironmentsPerRepository, 5);
  assert.equal(config.policy.repositories['acme/shop']?.budgets?.maxEnvironmentsPerRepository, 3);
  assert.equal(config.previews.tls, false);
  const withTtl = load([...minimal, '--policy-file=/config/policy.yaml', '--default-ttl=24h']);
  assert.equal(withTtl.policy.budgets.ttl, '24h');
});

test('every bad setting is reported at once, each named with its source and reason', () => {
  const issues = issuesOf(() =>
    load(
      [
        '--controllers=algorithm,webhook,frontend',
        '--log-level=verbose',
        '--webhook-port=80800',
        '--metrics-port=http',
        '--webhook-path=metrics',
        '--webhook-max-body-bytes=100',
        '--webhook-dedupe-window=forever',
        '--github-api-url=ftp://github.example.com',
        '--github-app-id=my-app',
        '--github-token-file=/secrets/token',
        '--github-throttle=yes',
        '--policy-file=/config/bad-policy.yaml',
        '--default-ttl=30s',
        '--max-environments-per-repository=-1',
        '--checkout-cache-dir=relative/dir',
        '--git-concurrency=0',
        '--git-allowed-protocols=ssh',
        '--sandbox-max-heap-mb=1024',
        '--sandbox-max-rss-mb=512',
        '--preview-domain=Preview_Example',
        '--ingress-class=Not Valid',
        '--tls-issuer-kind=Vault',
        '--pod-security=none',
        '--allowed-kinds=Deployment.apps,ClusterRole.rbac.authorization.k8s.io',
        '--prometheus-url=not a url',
        '--canary-traffic=istio',
        '--latency-metric=p99 latency',
        '--resync-interval=1s',
        '--leader-election-lease-duration=5s',
        '--leader-election-renew-deadline=10s',
        '--no-such-flag=1',
      ],
      { PREVIEW_OPERATOR_SANDBOX_TIMEOUT: '20' },
    ),
  );
  const expected: [string, RegExp][] = [
    ['--controllers', /--controllers=algorithm,webhook,frontend: unknown controller frontend/],
    ['--log-level', /must be one of: debug, info, warn, error/],
    ['--webhook-port', /--webhook-port=80800: must be between 0 and 65535/],
    ['--metrics-port', /must be a whole number/],
    ['--webhook-path', /must be a URL path starting with \//],
    ['--webhook-max-body-bytes', /must be between 1024 and 26214400/],
    ['--webhook-dedupe-window', /must be a duration/],
    ['--webhook-secret', /required by the webhook controller/],
    ['--github-api-url', /must be an http\(s\) URL/],
    ['--github-app-id', /must be the App's numeric id/],
    ['--github-token', /either a GitHub App .* or a token, not both/],
    ['--github-throttle', /must be true or false/],
    ['--policy-file', /filters\.skipDrafts: must be true or false/],
    ['--policy-file', /budgets\.ttl: must be at least 1m/],
    ['--policy-file', /repositorie: unknown field/],
    ['--default-ttl', /--default-ttl=30s: must be at least 1m/],
    ['--max-environments-per-repository', /must be at least 0/],
    ['--checkout-cache-dir', /must be an absolute path/],
    ['--git-concurrency', /must be between 1 and 64/],
    ['--git-allowed-protocols', /each must be https, http or file/],
    ['--sandbox-timeout', /PREVIEW_OPERATOR_SANDBOX_TIMEOUT=20: must be a duration/],
    ['--sandbox-max-rss-mb', /must be larger than --sandbox-max-heap-mb/],
    ['--preview-domain', /is not a DNS name/],
    ['--ingress-class', /not a valid IngressClass name/],
    ['--tls-issuer-kind', /must be one of: ClusterIssuer, Issuer/],
    ['--pod-security', /must be one of: restricted, baseline, privileged/],
    ['--allowed-kinds', /is cluster-scoped/],
    ['--prometheus-url', /must be an absolute URL/],
    ['--canary-traffic', /must be one of: replicas, httproute/],
    ['--latency-metric', /is not a metric name/],
    ['--resync-interval', /must be at least 10s/],
    ['--leader-election-lease-duration', /must be longer than --leader-election-renew-deadline/],
    ['--no-such-flag', /unknown flag/],
  ];
  for (const [setting, message] of expected) {
    assert.ok(
      issues.some((i) => i.startsWith(setting) && message.test(i)),
      `missing ${setting} ${message}\n${issues.join('\n')}`,
    );
  }
  assert.equal(issues.length, expected.length, issues.join('\n'));
});

test('missing and unreadable files, an invalid key, GitHub credentials absent, policy not YAML', () => {
  const issues = issuesOf(() =>
    load(['--webhook-secret-file=/secrets/missing', '--policy-file=/config/not-yaml.yaml', '--controllers=preview-environment']),
  );
  assert.ok(
    issues.some((i) => /^--webhook-secret-file .*: --webhook-secret-file=\/secrets\/missing: no such file/.test(i)),
    issues.join('\n'),
  );
  assert.ok(
    issues.some((i) => /^--policy-file .*: not valid YAML/.test(i)),
    issues.join('\n'),
  );
  assert.ok(
    issues.some((i) => /^--github-app-id .*: required by the preview-environment controller/.test(i)),
    issues.join('\n'),
  );
  assert.ok(
    issues.some((i) => /^--preview-domain .*: required by the preview-environment controller/.test(i)),
    issues.join('\n'),
  );
  const keyIssues = issuesOf(() => load(['--controllers=resync', '--github-app-id=1', '--github-app-private-key-file=/secrets/token']));
  assert.deepEqual(
    keyIssues.map((i) => i.split(':')[0]),
    ['--github-app-private-key-file (PREVIEW_OPERATOR_GITHUB_APP_PRIVATE_KEY_FILE)'],
  );
  assert.match(keyIssues[0]!, /not a PEM private key/);
  const empty = issuesOf(() => load(['--controllers=resync', '--github-token-file=/secrets/empty']));
  assert.deepEqual(empty, ['--github-token-file (PREVIEW_OPERATOR_GITHUB_TOKEN_FILE): the file is empty']);
});

test('secrets never appear in messages', () => {
  const issues = issuesOf(() =>
    load([
      '--webhook-secret=super-secret-value',
      '--webhook-secret-file=/secrets/webhook',
      '--controllers=webhook',
      '--github-token=ghp_do_not_print',
      '--github-app-id=x',
    ]),
  );
  assert.ok(issues.length > 0);
  assert.ok(
    issues.every((i) => !i.includes('super-secret-value') && !i.includes('ghp_do_not_print')),
    issues.join('\n'),
  );
});

test('synth needs no cluster, GitHub or webhook settings', () => {
  const config = load(['--controllers=webhook'], {}, 'synth');
  assert.equal(config.previews.domain, 'preview.localhost');
});

test('every setting has a distinct flag and environment variable', () => {
  assert.equal(new Set(settings.map((s) => s.flag)).size, settings.length);
  assert.equal(new Set(settings.map((s) => s.env)).size, settings.length);
});

test('the rendering policy: strict by default, loosened only within what can be allowed', () => {
  assert.deepEqual(load(minimal).previews.renderPolicy, {
    allowedServiceTypes: [],
    ingressAnnotations: [],
    allowTokenAutomount: false,
    priorityClasses: [],
    tolerationKeys: [],
    runtimeClasses: [],
    csiDrivers: [],
    storageClasses: [],
    limits: { maxObjects: 500, maxBytes: 4 * 1024 * 1024, maxObjectBytes: 512 * 1024, maxDepth: 64 },
  });
  const loose = load(
    [...minimal, '--allowed-service-types=LoadBalancer,NodePort', '--allow-token-automount=true', '--max-rendered-objects=2000'],
    { PREVIEW_OPERATOR_ALLOWED_INGRESS_ANNOTATIONS: 'nginx.ingress.kubernetes.io/enable-cors' },
  ).previews.renderPolicy;
  assert.deepEqual(
    [loose.allowedServiceTypes, loose.ingressAnnotations, loose.allowTokenAutomount, loose.limits.maxObjects],
    [['LoadBalancer', 'NodePort'], ['nginx.ingress.kubernetes.io/enable-cors'], true, 2000],
  );
  assert.deepEqual(
    issuesOf(() =>
      load([
        ...minimal,
        '--allowed-service-types=ExternalName',
        '--allowed-ingress-annotations=nginx.ingress.kubernetes.io/server-snippet,not a key',
        '--max-rendered-depth=100000',
      ]),
    ),
    [
      '--allowed-service-types (PREVIEW_OPERATOR_ALLOWED_SERVICE_TYPES): ExternalName: each must be LoadBalancer or NodePort (ClusterIP is always allowed, ExternalName never)',
      '--allowed-ingress-annotations (PREVIEW_OPERATOR_ALLOWED_INGRESS_ANNOTATIONS): "nginx.ingress.kubernetes.io/server-snippet" can never be allowed: snippets are raw controller configuration',
      '--allowed-ingress-annotations (PREVIEW_OPERATOR_ALLOWED_INGRESS_ANNOTATIONS): "not a key" is not an annotation key (prefix/name)',
      '--max-rendered-depth (PREVIEW_OPERATOR_MAX_RENDERED_DEPTH): --max-rendered-depth=100000: must be between 16 and 1000',
    ],
  );
});

test("the rendering policy's scheduling allow-lists: PriorityClass names and taint keys", () => {
  const loose = load([...minimal, '--allowed-priority-classes=preview-low', '--allowed-toleration-keys=example.com/previews,spot']).previews
    .renderPolicy;
  assert.deepEqual([loose.priorityClasses, loose.tolerationKeys], [['preview-low'], ['example.com/previews', 'spot']]);
  assert.deepEqual(
    issuesOf(() => load([...minimal, '--allowed-priority-classes=Not_A_Name', '--allowed-toleration-keys=a/b/c'])),
    [
      '--allowed-priority-classes (PREVIEW_OPERATOR_ALLOWED_PRIORITY_CLASSES): "Not_A_Name" is not a PriorityClass name',
      '--allowed-toleration-keys (PREVIEW_OPERATOR_ALLOWED_TOLERATION_KEYS): "a/b/c" is not a taint key (prefix/name or name)',
    ],
  );
});
