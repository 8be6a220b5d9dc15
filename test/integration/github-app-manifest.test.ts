// app.yml, the GitHub App manifest, asks for exactly what the operator uses. Permissions: every
// GitHub endpoint the code under src/ calls (each `rest.<scope>.<method>` and `request('METHOD
// /path')`, resolved to GitHub's operationId) needs the permission the table below gives (GitHub's
// "Permissions required for GitHub Apps"); app.yml grants their union and nothing more, so a new call
// fails here until its permission is in the table and in app.yml. Events: the operator, run as a
// user runs it, is sent one delivery of every event and action GitHub publishes an example of;
// app.yml subscribes to exactly the events it does not answer `unused`.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { Octokit } from '@octokit/rest';
import { parse, stringify } from 'yaml';
import { spawnOperator, waitStarted, type OperatorProcess } from '../fixtures/cli/operator-process.js';
import { installCrds } from '../fixtures/crds/install-crds.js';
import { kubeRequest } from '../fixtures/crds/kube-apply.js';
import { createDelivery } from '../github-emulator/webhook-delivery.js';
import { startTestEmulator } from '../github-emulator/test-emulator.js';
import { createNamespace, testCluster, uniqueName } from '../support/test-cluster.js';

type Level = 'read' | 'write';
interface Manifest {
  name: string;
  url: string;
  hook_attributes: { url: string; active?: boolean };
  redirect_url: string;
  public: boolean;
  default_permissions: Record<string, Level>;
  default_events: string[];
}

const root = fileURLToPath(new URL('../../', import.meta.url));
const manifest = parse(await readFile(path.join(root, 'app.yml'), 'utf8')) as Manifest;

/**
 * What each endpoint the code calls needs of an App installation. `token-only`: called only when the
 * credential is a token (commit statuses instead of check runs); `app-jwt`: called as the App itself.
 */
const needs: Record<string, Record<string, Level> | 'token-only' | 'app-jwt'> = {
  'pulls/list': { pull_requests: 'read' },
  'pulls/get': { pull_requests: 'read' },
  'issues/list-comments': { pull_requests: 'read' },
  'issues/create-comment': { pull_requests: 'write' },
  'issues/update-comment': { pull_requests: 'write' },
  // Labels belong to the Issues API: GitHub refuses label changes to an App with pull_requests alone.
  'issues/remove-label': { issues: 'write' },
  'repos/list-deployments': { deployments: 'read' },
  'repos/create-deployment': { deployments: 'write' },
  'repos/create-deployment-status': { deployments: 'write' },
  'checks/create': { checks: 'write' },
  'checks/update': { checks: 'write' },
  'checks/list-for-ref': { checks: 'read' },
  'checks/list-suites-for-ref': { checks: 'read' },
  'repos/get-combined-status-for-ref': { statuses: 'read' },
  'repos/create-commit-status': 'token-only',
  'repos/get-content': { contents: 'read' },
  'repos/get-commit': { contents: 'read' },
  'git/get-ref': { contents: 'read' },
  'git/get-blob': { contents: 'read' },
  'apps/get-repo-installation': 'app-jwt',
  // Who the operator writes as, to tell its own PR comment from others' (GET /app, GET /user).
  'apps/get-authenticated': 'app-jwt',
  'users/get-authenticated': 'token-only',
  // The resync's view of what the App can see: every installation, then each one's repositories.
  'apps/list-installations': 'app-jwt',
  'apps/list-repos-accessible-to-installation': { metadata: 'read' },
};
/** The permission GitHub requires of an App before it may subscribe to an event. */
const eventPermission: Record<string, string> = {
  pull_request: 'pull_requests',
  check_run: 'checks',
  check_suite: 'checks',
  status: 'statuses',
};
/** Sent to every App whatever it subscribes to; a manifest does not list them. */
const alwaysSent = new Set([
  'ping',
  'installation',
  'installation_repositories',
  'installation_target',
  'github_app_authorization',
  'meta',
]);

async function sourceFiles(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { withFileTypes: true });
  const nested = await Promise.all(
    entries.map((e) => {
      const full = path.join(dir, e.name);
      if (e.isDirectory()) return sourceFiles(full);
      return Promise.resolve(e.name.endsWith('.ts') && !e.name.endsWith('.test.ts') ? [full] : []);
    }),
  );
  return nested.flat();
}

/** operationId → the files under src/ that call it. */
async function calledOperations(): Promise<Map<string, string[]>> {
  const rest = new Octokit().rest as unknown as Record<
    string,
    Record<string, { endpoint: { DEFAULTS: { method: string; url: string } } } | undefined> | undefined
  >;
  const api = createRequire(import.meta.url)('@octokit/openapi/generated/api.github.com.json') as {
    paths: Record<string, Record<string, { operationId: string }>>;
  };
  const called = new Map<string, string[]>();
  for (const file of await sourceFiles(path.join(root, 'src'))) {
    const text = await readFile(file, 'utf8');
    const routes = [
      ...[...text.matchAll(/\brest\.([a-zA-Z]+)\.([a-zA-Z]+)\b/g)]
        .map((m) => rest[m[1]!]?.[m[2]!]?.endpoint.DEFAULTS)
        .filter((d) => d !== undefined),
      ...[...text.matchAll(/\.request\(\s*(['"`])(GET|POST|PUT|PATCH|DELETE) (\/[^'"`\s]*)\1/g)].map((m) => ({
        method: m[2]!,
        url: m[3]!,
      })),
    ];
    for (const { method, url } of routes) {
      const operationId = api.paths[url]?.[method.toLowerCase()]?.operationId;
      assert.ok(operationId, `${path.relative(root, file)} calls ${method} ${url}, which GitHub's REST description does not know`);
      called.set(operationId, [...(called.get(operationId) ?? []), path.relative(root, file)]);
    }
  }
  return called;
}

test('app.yml grants exactly the permissions of the endpoints src/ calls', async () => {
  const called = await calledOperations();
  for (const known of ['pulls/list', 'issues/create-comment', 'repos/create-deployment', 'checks/create', 'repos/get-content']) {
    assert.ok(called.has(known), `the scan finds ${known} (is it still the way src/ calls GitHub?)`);
  }
  const unknown = [...called].filter(([op]) => !(op in needs)).map(([op, files]) => `${op} (${files.join(', ')})`);
  assert.deepEqual(unknown, [], 'endpoints src/ calls that this table does not know: add the permission each needs here and in app.yml');
  const granted: Record<string, Level> = { metadata: 'read' };
  for (const op of called.keys()) {
    const need = needs[op]!;
    if (typeof need === 'string') continue;
    for (const [permission, level] of Object.entries(need)) if (granted[permission] !== 'write') granted[permission] = level;
  }
  const sorted = (o: Record<string, Level>) => Object.fromEntries(Object.entries(o).sort(([a], [b]) => a.localeCompare(b)));
  assert.deepEqual(sorted(manifest.default_permissions), sorted(granted));
  const unused = Object.keys(needs).filter((op) => !called.has(op));
  assert.deepEqual(unused, [], 'endpoints in the table that src/ no longer calls');
});

test('app.yml is a manifest GitHub accepts: its fields, and every event backed by a permission', () => {
  assert.deepEqual(Object.keys(manifest).sort(), [
    'default_events',
    'default_permissions',
    'description',
    'hook_attributes',
    'name',
    'public',
    'redirect_url',
    'url',
  ]);
  assert.match(manifest.hook_attributes.url, /^https:\/\/.+\/api\/github\/webhooks$/, "the chart's default webhook path");
  assert.ok(manifest.name.length <= 34, 'GitHub App names are at most 34 characters');
  for (const event of manifest.default_events) {
    const permission = eventPermission[event];
    assert.ok(permission && manifest.default_permissions[permission], `${event} needs the ${permission ?? '?'} permission`);
  }
});

const gh = await startTestEmulator();

test('app.yml subscribes to exactly the events the operator acts on', async () => {
  const cluster = await testCluster();
  const dir = await mkdtemp(path.join(os.tmpdir(), 'app-manifest-'));
  const namespace = uniqueName('app-manifest');
  const secret = randomBytes(16).toString('hex');
  let operator: OperatorProcess | undefined;
  try {
    await installCrds(cluster.kubeConfig);
    await createNamespace(cluster.kubeConfig, namespace);
    const app = gh.createApp();
    await writeFile(path.join(dir, 'key.pem'), app.privateKey);
    await writeFile(path.join(dir, 'secret'), `${secret}\n`);
    // A label no pull request carries: the pull_request deliveries change nothing in the shared cluster.
    await writeFile(path.join(dir, 'policy.yaml'), stringify({ filters: { labels: { anyOf: [`never-${namespace}`] } } }));
    operator = spawnOperator(['run'], {
      KUBECONFIG: cluster.kubeconfigPath,
      PREVIEW_OPERATOR_CONTROLLERS: 'webhook',
      PREVIEW_OPERATOR_LEADER_ELECTION_NAMESPACE: namespace,
      PREVIEW_OPERATOR_WEBHOOK_HOST: '127.0.0.1',
      PREVIEW_OPERATOR_WEBHOOK_PORT: '0',
      PREVIEW_OPERATOR_METRICS_PORT: '0',
      PREVIEW_OPERATOR_WEBHOOK_SECRET_FILE: path.join(dir, 'secret'),
      PREVIEW_OPERATOR_POLICY_FILE: path.join(dir, 'policy.yaml'),
      PREVIEW_OPERATOR_GITHUB_API_URL: gh.url,
      PREVIEW_OPERATOR_GITHUB_APP_ID: String(app.id),
      PREVIEW_OPERATOR_GITHUB_APP_PRIVATE_KEY_FILE: path.join(dir, 'key.pem'),
      PREVIEW_OPERATOR_CHECKOUT_CACHE_DIR: path.join(dir, 'checkouts'),
    });
    await waitStarted(operator);

    const definitions = createRequire(import.meta.url)('@octokit/webhooks-examples') as {
      name: string;
      examples: Record<string, unknown>[];
    }[];
    const results = new Map<string, Set<string>>();
    for (const { name: event, examples } of definitions) {
      const seen = new Set<string>();
      for (const example of examples) {
        const payload = structuredClone(example) as Record<string, unknown> & { repository?: Record<string, unknown> };
        if (seen.has(String(payload.action))) continue;
        seen.add(String(payload.action));
        // A repository of this run's own: nothing it names can meet another test's environment.
        if (payload.repository)
          payload.repository = {
            ...payload.repository,
            name: namespace,
            full_name: `acme/${namespace}`,
            owner: { login: 'acme', id: 1, type: 'Organization' },
          };
        const answer = await createDelivery({
          event,
          payload,
          hook: { secret, id: 1, targetType: 'integration', targetId: app.id },
        }).deliver(operator.webhookUrl());
        const result = String((JSON.parse(answer.body) as { result?: string }).result);
        assert.ok(answer.status < 500 && result !== 'unauthorized', `${event}.${String(payload.action)}: ${answer.status} ${answer.body}`);
        results.set(event, (results.get(event) ?? new Set()).add(result));
      }
    }
    const actedOn = [...results]
      .filter(([event, r]) => !alwaysSent.has(event) && [...r].some((x) => x !== 'unused'))
      .map(([event]) => event);
    assert.ok(
      actedOn.includes('pull_request'),
      `the operator acts on pull_request (results: ${JSON.stringify([...(results.get('pull_request') ?? [])])})`,
    );
    assert.deepEqual(manifest.default_events.slice().sort(), actedOn.sort(), 'app.yml default_events = the events the operator acts on');
  } finally {
    if (operator && operator.child.exitCode === null) {
      operator.child.kill('SIGTERM');
      await operator.exited;
    }
    await kubeRequest(cluster.kubeConfig, 'DELETE', `/api/v1/namespaces/${namespace}`).catch(() => {});
    await rm(dir, { recursive: true, force: true });
  }
});
