// The pod path does not pay for @kubernetes/client-node: every module this process resolves
// is recorded, the runtime is imported, an in-cluster config and a token kubeconfig are loaded
// and used for a request, and no client-node module was loaded; an exec kubeconfig then loads
// it (so the check can fail). The order of the tests matters: client-node, once loaded, stays.
import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import nodeModule from 'node:module';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { appliedOptions, kubeconfigText } from '../../test/support/kubeconfig-text.js';

/** Node 24's synchronous module hooks (missing from the @types/node the project pins). */
type ResolveHook = (specifier: string, context: object, next: (specifier: string, context: object) => { url: string }) => { url: string };
const { registerHooks } = nodeModule as typeof nodeModule & { registerHooks(hooks: { resolve: ResolveHook }): void };

const resolved: string[] = [];
registerHooks({
  resolve(specifier, context, next) {
    const result = next(specifier, context);
    resolved.push(result.url);
    return result;
  },
});
const clientNodeModules = () => resolved.filter((url) => url.includes('/node_modules/@kubernetes/client-node/'));

const scratch = mkdtempSync(path.join(tmpdir(), 'kube-config-lazy-'));
const server = http.createServer((_req, res) => res.end('{"major":"1"}'));
after(() => {
  server.close();
  rmSync(scratch, { recursive: true, force: true });
});

describe('client-node is loaded only for the kubeconfigs that need it', () => {
  it('in-cluster and a token kubeconfig: the runtime, the loader and a request load none of it', async () => {
    const { KubeClient, loadKubeConfig } = await import('./index.js');
    const sa = path.join(scratch, 'sa');
    mkdirSync(sa);
    writeFileSync(path.join(sa, 'token'), 'bound-token');
    writeFileSync(path.join(sa, 'namespace'), 'preview-system');
    const pod = { KUBERNETES_SERVICE_HOST: '10.96.0.1', KUBERNETES_SERVICE_PORT: '443' };
    const inCluster = await loadKubeConfig({ env: pod, serviceAccountDir: sa });
    assert.deepEqual((await appliedOptions(inCluster)).headers, { Authorization: 'Bearer bound-token' });

    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const file = path.join(scratch, 'token-kubeconfig');
    writeFileSync(file, kubeconfigText(`server: http://127.0.0.1:${(server.address() as AddressInfo).port}`, 'token: t'));
    const client = new KubeClient(await loadKubeConfig({ env: {}, path: file }));
    try {
      assert.deepEqual(await client.request({ path: '/version' }), { major: '1' });
    } finally {
      client.close();
    }
    assert.ok(
      resolved.some((url) => url.endsWith('/src/kube/kube-config-client-node.ts')),
      'the adapter itself is loaded (it is small)',
    );
    assert.deepEqual(clientNodeModules(), []);
  });

  it('an exec kubeconfig loads it', async () => {
    const { loadKubeConfig } = await import('./index.js');
    const file = path.join(scratch, 'exec-kubeconfig');
    const exec = 'exec:\n  apiVersion: client.authentication.k8s.io/v1\n  command: /bin/true';
    writeFileSync(file, kubeconfigText('server: https://10.0.0.1:6443', exec));
    await loadKubeConfig({ env: {}, path: file });
    assert.ok(clientNodeModules().length > 100, `client-node's modules: ${clientNodeModules().length}`);
  });
});
