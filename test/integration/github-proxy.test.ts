// GitHub's requests through the proxy HTTPS_PROXY / HTTP_PROXY name, as a cluster behind an egress
// proxy needs: the App's token exchange and the REST calls reach the emulator through a small
// CONNECT proxy run here, and NO_PROXY's hosts go direct.
import assert from 'node:assert/strict';
import { createServer, request as httpRequest, type Server } from 'node:http';
import { connect, type AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { createGitHubClients } from '../../src/github/octokit-factory.js';
import { startTestEmulator } from '../github-emulator/test-emulator.js';

const gh = await startTestEmulator();

/** A forward proxy: CONNECT tunnels, and absolute-form requests forwarded; it records each target. */
function startProxy(): Promise<{ url: string; seen: string[]; server: Server }> {
  const seen: string[] = [];
  const server = createServer((req, res) => {
    const target = new URL(req.url!);
    seen.push(`${req.method} ${target.host}`);
    const upstream = httpRequest(target, { method: req.method, headers: req.headers }, (answer) => {
      res.writeHead(answer.statusCode!, answer.headers);
      answer.pipe(res);
    });
    upstream.on('error', () => res.destroy());
    req.pipe(upstream);
  });
  server.on('connect', (req, client, head) => {
    seen.push(`CONNECT ${req.url}`);
    const [host, port] = req.url!.split(':');
    const upstream = connect(Number(port), host, () => {
      client.write('HTTP/1.1 200 Connection Established\r\n\r\n');
      upstream.write(head);
      upstream.pipe(client);
      client.pipe(upstream);
    });
    upstream.on('error', () => client.destroy());
    client.on('error', () => upstream.destroy());
  });
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () => {
      resolve({ url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, seen, server });
    }),
  );
}

let proxy: Awaited<ReturnType<typeof startProxy>>;
before(async () => (proxy = await startProxy()));
after(() => {
  proxy.server.closeAllConnections();
  proxy.server.close();
});

function appClients(env: Record<string, string>) {
  const repo = gh.createRepository({ owner: 'proxied', name: `repo-${proxy.seen.length}-${Date.now()}`, defaultBranchSha: 'a'.repeat(40) });
  gh.openPullRequest(repo, { author: 'dev', head: { ref: 'f', sha: 'b'.repeat(40) } });
  const app = gh.createApp();
  gh.installApp(app.id, [repo]);
  const clients = createGitHubClients({ auth: { type: 'app', appId: app.id, privateKey: app.privateKey }, baseUrl: gh.url, proxyEnv: env });
  return { clients, repo };
}

describe('GitHub requests and the proxy settings', () => {
  const emulator = new URL(gh.url).host;

  it('go through HTTPS_PROXY / HTTP_PROXY: the token exchange and the REST calls', async () => {
    const { clients, repo } = appClients({ HTTPS_PROXY: proxy.url, HTTP_PROXY: proxy.url });
    const mark = gh.mark();
    const before = proxy.seen.length;
    const client = await clients.forRepository(repo);
    const pull = await client.rest.pulls.get({ owner: repo.owner, repo: repo.name, pull_number: 1 });
    assert.equal(pull.data.head.sha, 'b'.repeat(40));
    const operations = gh.requestsSince(mark).map((r) => r.operationId);
    assert.deepEqual(operations, ['apps/get-repo-installation', 'apps/create-installation-access-token', 'pulls/get']);
    // Tunnels (kept alive, so fewer than requests), all of them to the emulator, none direct.
    const tunnels = proxy.seen.slice(before);
    assert.ok(tunnels.length > 0, 'the proxy saw the requests');
    assert.ok(
      tunnels.every((t) => t === `CONNECT ${emulator}` || t.endsWith(` ${emulator}`)),
      tunnels.join(', '),
    );
  });

  it('go direct to a host NO_PROXY names', async () => {
    const { clients, repo } = appClients({ HTTPS_PROXY: proxy.url, HTTP_PROXY: proxy.url, NO_PROXY: '127.0.0.1' });
    const before = proxy.seen.length;
    const client = await clients.forRepository(repo);
    await client.rest.pulls.get({ owner: repo.owner, repo: repo.name, pull_number: 1 });
    assert.deepEqual(proxy.seen.slice(before), []);
  });

  it('go direct without proxy settings', async () => {
    const { clients, repo } = appClients({});
    const before = proxy.seen.length;
    const client = await clients.forRepository(repo);
    await client.rest.pulls.get({ owner: repo.owner, repo: repo.name, pull_number: 1 });
    assert.deepEqual(proxy.seen.slice(before), []);
  });
});
