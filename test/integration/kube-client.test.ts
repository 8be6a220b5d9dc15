// The client: kubeconfig loading, discovery (CRDs included) and the one mapping from API
// failures to typed errors.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type AddressInfo } from 'node:net';
import { CoreV1Api, KubeConfig } from '@kubernetes/client-node';
import {
  ConflictError,
  ForbiddenError,
  InvalidError,
  KubeClient,
  NoKindMatchError,
  NotFoundError,
  TransientError,
  loadKubeConfig,
  toKubeError,
} from '../../src/kube/index.js';
import { kubeconfigYaml } from '../cluster/start-cluster.js';
import { createNamespace, newIdentity, testCluster, uniqueName, type TestCluster } from '../support/test-cluster.js';
import { tcpRelay } from '../support/tcp-relay.js';

let cluster: TestCluster;
let client: KubeClient;
let ns: string;
before(async () => {
  cluster = await testCluster();
  client = new KubeClient(await loadKubeConfig({ path: cluster.kubeconfigPath }));
  ns = uniqueName('client');
  await createNamespace(cluster.kubeConfig, ns);
});
after(() => client?.close());

/** A kubeconfig that counts how often the client applies its credentials. */
class CountingKubeConfig extends KubeConfig {
  reads = 0;
  override async applyToHTTPSOptions(options: Parameters<KubeConfig['applyToHTTPSOptions']>[0]): Promise<void> {
    this.reads++;
    return super.applyToHTTPSOptions(options);
  }
}

describe('kubeconfig', () => {
  it('credentials are read once, not per request, and read again at once after a 401 (a rotated token)', async () => {
    const me = await newIdentity(cluster, 'kube-client-rotation');
    const token = me.kubeConfig.getCurrentUser()!.token!;
    const kc = new CountingKubeConfig();
    kc.loadFromString(me.kubeConfig.exportConfig());
    const user = kc.getCurrentUser() as { token?: string };
    // A TTL far longer than the test: only a 401 can make the client read them again.
    const rotating = new KubeClient(kc, { credentialsTtlMs: 600_000 });
    try {
      for (let i = 0; i < 5; i++) await rotating.get({ apiVersion: 'v1', kind: 'Namespace', name: ns });
      assert.equal(kc.reads, 1, 'five requests, the kubeconfig applied once');
      user.token = 'a-token-the-server-revoked';
      rotating.close(); // as a restart would: the old token is read
      await assert.rejects(
        rotating.get({ apiVersion: 'v1', kind: 'Namespace', name: ns }),
        (err: unknown) => err instanceof ForbiddenError && err.statusCode === 401,
      );
      user.token = token; // rotated
      const found = await rotating.get({ apiVersion: 'v1', kind: 'Namespace', name: ns });
      assert.equal(found.metadata.name, ns, 'the request after the 401 used the rotated token');
    } finally {
      rotating.close();
    }
  });

  it("credentials that expire (an exec plugin's) are read again when they do, not only after the TTL", async () => {
    const me = await newIdentity(cluster, 'kube-client-expiry');
    class ExpiringKubeConfig extends CountingKubeConfig {
      /** Each application is good for 2 s, as a plugin's short-lived token. */
      credentialsExpireAt(): number {
        return Date.now() + 2000;
      }
    }
    const kc = new ExpiringKubeConfig();
    kc.loadFromString(me.kubeConfig.exportConfig());
    // A TTL far longer than the test: only the expiry can make the client read them again.
    const expiring = new KubeClient(kc, { credentialsTtlMs: 600_000 });
    try {
      await expiring.get({ apiVersion: 'v1', kind: 'Namespace', name: ns });
      await expiring.get({ apiVersion: 'v1', kind: 'Namespace', name: ns });
      assert.equal(kc.reads, 1, 'kept while they are valid');
      await new Promise((r) => setTimeout(r, 2200));
      await expiring.get({ apiVersion: 'v1', kind: 'Namespace', name: ns });
      assert.equal(kc.reads, 2, 'read again once they expired');
    } finally {
      expiring.close();
    }
  });

  it('loads an explicit path, or KUBECONFIG', async () => {
    assert.equal((await loadKubeConfig({ path: cluster.kubeconfigPath })).getCurrentCluster().server, cluster.server);
    const saved = process.env.KUBECONFIG;
    process.env.KUBECONFIG = cluster.kubeconfigPath;
    try {
      const fromEnv = new KubeClient(await loadKubeConfig());
      const list = await fromEnv.list({ apiVersion: 'v1', kind: 'Namespace' });
      assert.ok(list.items.some((n) => n.metadata.name === ns));
      fromEnv.close();
    } finally {
      if (saved === undefined) delete process.env.KUBECONFIG;
      else process.env.KUBECONFIG = saved;
    }
  });
});

describe('lists', () => {
  it('read every page, and items carry apiVersion and kind (the server omits them for built-in kinds)', async () => {
    await client.apply({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'plain', namespace: ns },
      data: { a: '1' },
      binaryData: { b: 'AA==' },
      immutable: false,
    });
    const list = await client.list({ apiVersion: 'v1', kind: 'ConfigMap' }, { namespace: ns, limit: 1 });
    assert.ok(list.resourceVersion);
    const plain = list.items.find((o) => o.metadata.name === 'plain')!;
    assert.equal(plain.apiVersion, 'v1');
    assert.equal(plain.kind, 'ConfigMap');
    assert.deepEqual(plain.binaryData, { b: 'AA==' });
    assert.ok(list.items.length >= 2, 'paginated with limit 1, all pages read');
  });
});

describe('transport', () => {
  it('speaks HTTP/2 to the API server: a watch and thirty requests at once over one connection', async () => {
    const relay = await tcpRelay(cluster.server);
    const kc = new KubeConfig();
    kc.loadFromString(kubeconfigYaml(relay.url, cluster.kubeConfig.getCurrentCluster()!.caFile!, cluster.token));
    const relayed = new KubeClient(kc);
    try {
      const watch = await relayed.stream({ path: `/api/v1/namespaces/${ns}/configmaps`, query: { watch: 1 } });
      const lists = await Promise.all(
        Array.from({ length: 30 }, () => relayed.list({ apiVersion: 'v1', kind: 'ConfigMap' }, { namespace: ns })),
      );
      watch.close();
      assert.ok(lists.every((l) => l.resourceVersion));
      assert.equal(relay.connections, 1);
    } finally {
      relayed.close();
      relay.close();
    }
  });
});

describe('typed errors', () => {
  const cm = (name: string) => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace: ns }, data: { a: '1' } });

  it('not found, already exists, stale resourceVersion', async () => {
    await assert.rejects(client.get({ apiVersion: 'v1', kind: 'ConfigMap', namespace: ns, name: 'missing' }), NotFoundError);
    const created = await client.create(cm('exists'));
    await assert.rejects(client.create(cm('exists')), (err: ConflictError) => err instanceof ConflictError && err.alreadyExists);
    await client.patch({ apiVersion: 'v1', kind: 'ConfigMap', namespace: ns, name: 'exists' }, 'merge', { data: { a: '2' } });
    await assert.rejects(
      client.replace({ ...created, data: { a: 'stale' } }),
      (err: ConflictError) => err instanceof ConflictError && !err.alreadyExists && err.statusCode === 409,
    );
  });

  it("invalid, with the API server's causes", async () => {
    const err = await client
      .create({
        apiVersion: 'apps/v1',
        kind: 'Deployment',
        metadata: { name: 'bad', namespace: ns },
        spec: {
          replicas: -1,
          selector: { matchLabels: { a: 'b' } },
          template: { metadata: { labels: { a: 'b' } }, spec: { containers: [{ name: 'c' }] } },
        },
      })
      .catch((e: unknown) => e);
    assert.ok(err instanceof InvalidError, String(err));
    const fields = err.causes.map((c) => c.field);
    assert.ok(fields.includes('spec.replicas'), fields.join(', '));
    assert.ok(fields.includes('spec.template.spec.containers[0].image'), fields.join(', '));
  });

  it('forbidden for an identity without the right', async () => {
    const viewer = await newIdentity(cluster, 'kube-client-viewer', 'view');
    const limited = new KubeClient(viewer.kubeConfig);
    await limited.get({ apiVersion: 'v1', kind: 'ConfigMap', namespace: ns, name: 'exists' });
    await assert.rejects(limited.create(cm('nope')), (err: ForbiddenError) => err instanceof ForbiddenError && err.statusCode === 403);
    limited.close();
  });

  it('no kind match for kinds the server does not serve', async () => {
    await assert.rejects(client.get({ apiVersion: 'nope.example.com/v1', kind: 'Nope', name: 'x' }), NoKindMatchError);
    await assert.rejects(client.get({ apiVersion: 'v1', kind: 'Nope', name: 'x' }), NoKindMatchError);
    // A group nobody installs: other test files share this cluster and add CRDs (cert-manager's among them).
    assert.equal(await client.discovery.has({ apiVersion: 'nope.example.com/v1', kind: 'Nope' }), false);
    assert.equal(await client.discovery.has({ apiVersion: 'apps/v1', kind: 'Deployment' }), true);
  });

  it('transient when the server cannot be reached', async () => {
    const port = await new Promise<number>((resolve) => {
      const srv = createServer().listen(0, '127.0.0.1', () => {
        const p = (srv.address() as AddressInfo).port;
        srv.close(() => resolve(p));
      });
    });
    const kc = new KubeConfig();
    kc.loadFromString(kubeconfigYaml(`https://127.0.0.1:${port}`, cluster.kubeConfig.getCurrentCluster()!.caFile!, 'token'));
    const unreachable = new KubeClient(kc);
    await assert.rejects(
      unreachable.list({ apiVersion: 'v1', kind: 'ConfigMap' }),
      (err: TransientError) => err instanceof TransientError && err.reason === 'ECONNREFUSED',
    );
  });

  it("maps client-node's ApiException (string body) too", async () => {
    const core = cluster.kubeConfig.makeApiClient(CoreV1Api);
    const err = await core.readNamespacedConfigMap({ namespace: ns, name: 'missing' }).catch((e: unknown) => e);
    const mapped = toKubeError(err);
    assert.ok(mapped instanceof NotFoundError, mapped.message);
    assert.equal(mapped.reason, 'NotFound');
    assert.match(mapped.message, /configmaps "missing" not found/);
  });
});
