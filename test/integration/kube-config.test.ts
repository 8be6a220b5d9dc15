// The operator's own kubeconfig loader against the real control plane: verified TLS with the
// kubeconfig's CA, an exec credential plugin (run by @kubernetes/client-node) whose token the
// API server accepts (and runs again after a 401), a KUBECONFIG list merged through
// client-node, and a rejected token surfacing as the typed 401.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { ForbiddenError, KubeClient, loadKubeConfig, TransientError } from '../../src/kube/index.js';
import { createNamespace, newIdentity, testCluster, uniqueName, type Identity, type TestCluster } from '../support/test-cluster.js';
import { kubeconfigText } from '../support/kubeconfig-text.js';

let cluster: TestCluster;
let ns: string;
let me: Identity;
let token: string;
let caFile: string;
const scratch = mkdtempSync(path.join(tmpdir(), 'kube-config-it-'));
const clients: KubeClient[] = [];
after(() => {
  for (const c of clients) c.close();
  rmSync(scratch, { recursive: true, force: true });
});

before(async () => {
  cluster = await testCluster();
  ns = uniqueName('kubeconfig');
  await createNamespace(cluster.kubeConfig, ns);
  me = await newIdentity(cluster, 'kube-config-exec');
  token = me.kubeConfig.getCurrentUser()!.token!;
  caFile = cluster.kubeConfig.getCurrentCluster()!.caFile!;
});

async function client(file: string): Promise<KubeClient> {
  const c = new KubeClient(await loadKubeConfig({ path: file, env: {} }));
  clients.push(c);
  return c;
}

/** A kubeconfig for the test cluster with `user` (YAML, indented under `user:`). */
function kubeconfig(name: string, user: string, cluster2 = `certificate-authority: ${caFile}`): string {
  const file = path.join(scratch, name);
  writeFileSync(
    file,
    kubeconfigText(`server: ${cluster.server}\n${cluster2}`, user, { cluster: 'local', user: 'someone', context: 'local' }),
  );
  return file;
}

/** An exec plugin printing the tokens in `tokens` (one per run, the last one repeated), counting its runs. */
function execPlugin(name: string, tokens: string[]): { script: string; runs: () => number } {
  const dir = path.join(scratch, name);
  const script = `${dir}.sh`;
  const list = tokens.map((t) => `"${t}"`).join(' ');
  writeFileSync(
    script,
    `#!/bin/sh
echo run >> "${dir}.runs"
RUN=$(wc -l < "${dir}.runs" | tr -d ' ')
i=0; for t in ${list}; do i=$((i+1)); TOKEN=$t; [ $i -ge $RUN ] && break; done
printf '{"apiVersion":"client.authentication.k8s.io/v1","kind":"ExecCredential","status":{"token":"%s"}}' "$TOKEN"
`,
    { mode: 0o755 },
  );
  return { script, runs: () => readFileSync(`${dir}.runs`, 'utf8').trim().split('\n').length };
}

describe('kubeconfig loader against the control plane', () => {
  it('the cluster kubeconfig: lists namespaces over TLS verified with its certificate-authority', async () => {
    const kc = await loadKubeConfig({ path: cluster.kubeconfigPath });
    assert.equal(kc.getCurrentCluster().server, cluster.server);
    const list = await (await client(cluster.kubeconfigPath)).list({ apiVersion: 'v1', kind: 'Namespace' });
    assert.ok(list.items.some((n) => n.metadata.name === ns));
  });

  it('the server is verified: without the CA (system roots only) the same cluster is refused', async () => {
    const file = kubeconfig('no-ca', `token: ${token}`, '');
    await assert.rejects((await client(file)).list({ apiVersion: 'v1', kind: 'Namespace' }), /self.signed|unable to verify|local issuer/i);
  });

  it('an exec plugin: its token is the identity the API server sees', async () => {
    const plugin = execPlugin('exec-ok', [token]);
    const c = await client(
      kubeconfig('exec-ok', `exec:\n  apiVersion: client.authentication.k8s.io/v1\n  command: ${plugin.script}\n  interactiveMode: Never`),
    );
    const mark = cluster.audit.mark();
    await c.apply({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'from-exec', namespace: ns }, data: { a: '1' } });
    await c.get({ apiVersion: 'v1', kind: 'ConfigMap', namespace: ns, name: 'from-exec' });
    await cluster.audit.settle();
    const writes = cluster.audit.writes(mark, { user: me.username, namespace: ns });
    assert.deepEqual(
      writes.map((w) => `${w.verb} ${w.objectRef?.resource}/${w.objectRef?.name}`),
      ['patch configmaps/from-exec'],
    );
    assert.equal(plugin.runs(), 1, 'the credential is kept between requests');
  });

  it('an exec token the API server rejects: the request is a 401, and the next one runs the plugin again and succeeds', async () => {
    const plugin = execPlugin('exec-rotate', ['revoked-token', token]);
    const c = await client(
      kubeconfig(
        'exec-rotate',
        `exec:\n  apiVersion: client.authentication.k8s.io/v1\n  command: ${plugin.script}\n  interactiveMode: IfAvailable`,
      ),
    );
    await assert.rejects(
      c.get({ apiVersion: 'v1', kind: 'Namespace', name: ns }),
      (err: unknown) => err instanceof ForbiddenError && err.statusCode === 401,
    );
    const found = await c.get({ apiVersion: 'v1', kind: 'Namespace', name: ns });
    assert.equal(found.metadata.name, ns);
    assert.equal(plugin.runs(), 2);
  });

  it('a credential plugin that fails is a transient error (worth a retry), not a refusal', async () => {
    const script = path.join(scratch, 'exec-fails.sh');
    writeFileSync(script, '#!/bin/sh\necho "token service throttled" >&2\nexit 1\n', { mode: 0o755 });
    const c = await client(
      kubeconfig('exec-fails', `exec:\n  apiVersion: client.authentication.k8s.io/v1\n  command: ${script}\n  interactiveMode: Never`),
    );
    await assert.rejects(
      c.get({ apiVersion: 'v1', kind: 'Namespace', name: ns }),
      (err: unknown) => err instanceof TransientError && /token service throttled/.test(err.message),
    );
  });

  it('a wrong static token: ForbiddenError with status 401', async () => {
    const c = await client(kubeconfig('wrong-token', 'token: not-a-token-this-cluster-knows'));
    await assert.rejects(
      c.list({ apiVersion: 'v1', kind: 'Namespace' }),
      (err: unknown) => err instanceof ForbiddenError && err.statusCode === 401 && err.reason === 'Unauthorized',
    );
  });

  it('a KUBECONFIG list (through client-node): the context of the first file, the credentials of the second', async () => {
    const contextOnly = path.join(scratch, 'list-context');
    writeFileSync(
      contextOnly,
      `current-context: merged\ncontexts:\n- name: merged\n  context: {cluster: local, user: someone, namespace: ${ns}}\n`,
    );
    const credentials = kubeconfig('list-credentials', `token: ${token}`);
    const kc = await loadKubeConfig({ path: [contextOnly, path.join(scratch, 'missing'), credentials].join(path.delimiter), env: {} });
    assert.equal(kc.namespace, ns);
    const c = new KubeClient(kc);
    clients.push(c);
    const mark = cluster.audit.mark();
    await c.apply({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'from-list', namespace: kc.namespace }, data: { a: '1' } });
    await cluster.audit.settle();
    assert.deepEqual(
      cluster.audit.writes(mark, { user: me.username, namespace: ns }).map((w) => w.objectRef?.name),
      ['from-list'],
    );
  });

  it("in-cluster: the Service from the environment, the ServiceAccount folder's CA, token and namespace", async () => {
    const sa = path.join(scratch, 'serviceaccount');
    mkdirSync(sa);
    copyFileSync(caFile, path.join(sa, 'ca.crt'));
    writeFileSync(path.join(sa, 'token'), token);
    writeFileSync(path.join(sa, 'namespace'), ns);
    const server = new URL(cluster.server);
    const env = { KUBERNETES_SERVICE_HOST: server.hostname, KUBERNETES_SERVICE_PORT: server.port };
    const kc = await loadKubeConfig({ env, serviceAccountDir: sa });
    assert.equal(kc.namespace, ns);
    const c = new KubeClient(kc);
    clients.push(c);
    const mark = cluster.audit.mark();
    await c.apply({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'in-cluster', namespace: kc.namespace }, data: { a: '1' } });
    await cluster.audit.settle();
    assert.deepEqual(
      cluster.audit.writes(mark, { user: me.username, namespace: ns }).map((w) => w.objectRef?.name),
      ['in-cluster'],
    );
  });

  it('tokenFile: a token written later is used once the client reads credentials again', async () => {
    const tokenFile = path.join(scratch, 'token');
    writeFileSync(tokenFile, 'stale-token\n');
    const c = await client(kubeconfig('token-file', `tokenFile: ${tokenFile}`));
    await assert.rejects(
      c.get({ apiVersion: 'v1', kind: 'Namespace', name: ns }),
      (err: unknown) => err instanceof ForbiddenError && err.statusCode === 401,
    );
    writeFileSync(tokenFile, `${token}\n`);
    assert.equal(
      (await c.get({ apiVersion: 'v1', kind: 'Namespace', name: ns })).metadata.name,
      ns,
      'the 401 made the client read the file again',
    );
  });
});
