// TLS as the kubeconfig describes it, through KubeClient against local HTTPS servers with a
// throwaway PKI (made with the openssl command): the server is verified with the cluster's CA
// (or by name with tls-server-name, or not at all when insecure), the client presents its
// certificate, and proxy-url (through @kubernetes/client-node's agent) tunnels through an HTTP
// CONNECT proxy.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import net, { type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { TLSSocket } from 'node:tls';
import { KubeClient } from './client.js';
import { loadKubeConfig } from './kube-config.js';
import { kubeconfigText } from '../../test/support/kubeconfig-text.js';
import { issuedBy, selfSigned, type TestCertificate } from '../../test/support/test-pki.js';

const pki = mkdtempSync(path.join(tmpdir(), 'kube-config-tls-'));
const servers: { close(): void; closeAllConnections?(): void }[] = [];
after(() => {
  for (const s of servers) {
    s.closeAllConnections?.();
    s.close();
  }
  rmSync(pki, { recursive: true, force: true });
});

interface Answer {
  /** The CN of the verified client certificate, if one was presented. */
  clientCN: string | null;
  authorization: string | null;
}

/** An HTTPS server that asks for a client certificate and answers who presented what. */
async function whoamiServer(cert: string, key: string, ca: string): Promise<{ port: number; connections: () => number }> {
  let connections = 0;
  const server = https.createServer({ cert, key, ca, requestCert: true, rejectUnauthorized: false }, (req, res) => {
    const socket = req.socket as TLSSocket;
    const peer = socket.authorized ? socket.getPeerCertificate() : undefined;
    const cn = peer?.subject?.CN;
    const answer: Answer = { clientCN: (Array.isArray(cn) ? cn[0] : cn) ?? null, authorization: req.headers.authorization ?? null };
    res.setHeader('content-type', 'application/json');
    res.end(JSON.stringify(answer));
  });
  server.on('secureConnection', () => connections++);
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { port: (server.address() as AddressInfo).port, connections: () => connections };
}

function kubeconfig(cluster: string, user: string): string {
  const file = path.join(pki, `kubeconfig-${Math.random().toString(36).slice(2)}`);
  writeFileSync(file, kubeconfigText(cluster, user, { cluster: 'local', user: 'jane' }));
  return file;
}

const b64 = (s: string) => Buffer.from(s).toString('base64');
let testCa: TestCertificate;
let caFile: string;
let ca: string;
let jane: TestCertificate;
let byIp: { port: number; connections: () => number };
let byName: { port: number; connections: () => number };

before(async () => {
  testCa = selfSigned(pki, 'ca', 'kube-config-test-ca', ['basicConstraints=critical,CA:TRUE', 'keyUsage=critical,keyCertSign']);
  ({ certFile: caFile, cert: ca } = testCa);
  const ipServer = issuedBy(testCa, pki, 'server-ip', 'kube-apiserver', ['subjectAltName=IP:127.0.0.1', 'extendedKeyUsage=serverAuth']);
  const nameServer = issuedBy(testCa, pki, 'server-name', 'kube-apiserver', [
    'subjectAltName=DNS:kube.example.test',
    'extendedKeyUsage=serverAuth',
  ]);
  jane = issuedBy(testCa, pki, 'jane', 'jane', ['extendedKeyUsage=clientAuth']);
  byIp = await whoamiServer(ipServer.cert, ipServer.key, ca);
  byName = await whoamiServer(nameServer.cert, nameServer.key, ca);
});

async function whoami(file: string, options: { credentialsTtlMs?: number } = {}): Promise<Answer> {
  const client = new KubeClient(await loadKubeConfig({ env: {}, path: file }), options);
  try {
    return await client.request<Answer>({ path: '/whoami' });
  } finally {
    client.close();
  }
}

describe('TLS from the kubeconfig, end to end', () => {
  it('certificate-authority file verifies the server; client-certificate and client-key files identify the user', async () => {
    const file = kubeconfig(
      `server: https://127.0.0.1:${byIp.port}\ncertificate-authority: ${caFile}`,
      `client-certificate: ${jane.certFile}\nclient-key: ${jane.keyFile}`,
    );
    assert.deepEqual(await whoami(file), { clientCN: 'jane', authorization: null });
  });

  it('certificate-authority-data, client-certificate-data and client-key-data', async () => {
    const file = kubeconfig(
      `server: https://127.0.0.1:${byIp.port}\ncertificate-authority-data: ${b64(ca)}`,
      `client-certificate-data: ${b64(jane.cert)}\nclient-key-data: ${b64(jane.key)}`,
    );
    assert.deepEqual(await whoami(file), { clientCN: 'jane', authorization: null });
  });

  it('without the cluster CA the server is not trusted; insecure-skip-tls-verify skips the check', async () => {
    const untrusted = kubeconfig(`server: https://127.0.0.1:${byIp.port}`, 'token: t');
    await assert.rejects(whoami(untrusted), /unable to (verify|get local issuer)|self.signed/i);
    const insecure = kubeconfig(`server: https://127.0.0.1:${byIp.port}\ninsecure-skip-tls-verify: true`, 'token: t');
    assert.deepEqual(await whoami(insecure), { clientCN: null, authorization: 'Bearer t' });
  });

  it('tls-server-name: a server reached by IP is verified against the name its certificate carries', async () => {
    const withoutName = kubeconfig(`server: https://127.0.0.1:${byName.port}\ncertificate-authority: ${caFile}`, 'token: t');
    await assert.rejects(whoami(withoutName), /IP: 127\.0\.0\.1 is not in the cert's list|does not match certificate's altnames/);
    const withName = kubeconfig(
      `server: https://127.0.0.1:${byName.port}\ncertificate-authority: ${caFile}\ntls-server-name: kube.example.test`,
      'token: t',
    );
    assert.deepEqual(await whoami(withName), { clientCN: null, authorization: 'Bearer t' });
  });

  it('a rotated client certificate file is presented once credentials are read again', async () => {
    const rotating = issuedBy(testCa, pki, 'rotating', 'jane-v1', ['extendedKeyUsage=clientAuth']);
    const file = kubeconfig(
      `server: https://127.0.0.1:${byIp.port}\ncertificate-authority: ${caFile}`,
      `client-certificate: ${rotating.certFile}\nclient-key: ${rotating.keyFile}`,
    );
    const client = new KubeClient(await loadKubeConfig({ env: {}, path: file }), { credentialsTtlMs: 0 });
    try {
      assert.equal((await client.request<Answer>({ path: '/whoami' })).clientCN, 'jane-v1');
      const v2 = issuedBy(testCa, pki, 'rotating-v2', 'jane-v2', ['extendedKeyUsage=clientAuth']);
      writeFileSync(rotating.keyFile, v2.key);
      writeFileSync(rotating.certFile, v2.cert);
      assert.equal((await client.request<Answer>({ path: '/whoami' })).clientCN, 'jane-v2');
    } finally {
      client.close();
    }
  });

  it('a client certificate and key that do not belong together fail at load', async () => {
    const other = issuedBy(testCa, pki, 'other', 'other', ['extendedKeyUsage=clientAuth']);
    const file = kubeconfig(`server: https://127.0.0.1:${byIp.port}`, `client-certificate: ${jane.certFile}\nclient-key: ${other.keyFile}`);
    await assert.rejects(loadKubeConfig({ env: {}, path: file }), /user "jane": the client certificate and key are not a usable pair/);
  });
});

describe('proxy-url (through client-node): an HTTP CONNECT tunnel', () => {
  /** A CONNECT proxy that records each tunnel's target and Proxy-Authorization, refusing wrong credentials. */
  async function connectProxy(expectedAuth?: string) {
    const tunnels: { target: string; auth: string | undefined }[] = [];
    const proxy = http.createServer((_req, res) => res.writeHead(405).end());
    proxy.on('connect', (req: http.IncomingMessage, client: net.Socket) => {
      const auth = req.headers['proxy-authorization'];
      tunnels.push({ target: req.url ?? '', auth });
      if (expectedAuth && auth !== expectedAuth) {
        client.end('HTTP/1.1 407 Proxy Authentication Required\r\nProxy-Authenticate: Basic\r\n\r\n');
        return;
      }
      const [host, port] = [req.url!.slice(0, req.url!.lastIndexOf(':')), Number(req.url!.slice(req.url!.lastIndexOf(':') + 1))];
      const upstream = net.connect(port, host, () => {
        client.write('HTTP/1.1 200 Connection Established\r\n\r\n');
        upstream.pipe(client);
        client.pipe(upstream);
      });
      const drop = () => {
        upstream.destroy();
        client.destroy();
      };
      upstream.on('error', drop);
      client.on('error', drop);
    });
    servers.push(proxy);
    await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
    return { port: (proxy.address() as AddressInfo).port, tunnels };
  }

  it('requests go through the tunnel, with TLS to the server inside it; connections are kept alive', async () => {
    const proxy = await connectProxy(`Basic ${b64('bastion:p@ss')}`);
    const file = kubeconfig(
      `server: https://127.0.0.1:${byIp.port}\ncertificate-authority: ${caFile}\nproxy-url: http://bastion:p%40ss@127.0.0.1:${proxy.port}`,
      `client-certificate: ${jane.certFile}\nclient-key: ${jane.keyFile}`,
    );
    const client = new KubeClient(await loadKubeConfig({ env: {}, path: file }));
    try {
      for (let i = 0; i < 3; i++)
        assert.deepEqual(await client.request<Answer>({ path: '/whoami' }), { clientCN: 'jane', authorization: null });
    } finally {
      client.close();
    }
    assert.deepEqual(
      proxy.tunnels,
      [{ target: `127.0.0.1:${byIp.port}`, auth: `Basic ${b64('bastion:p@ss')}` }],
      'one tunnel for three requests',
    );
  });

  it('a proxy that refuses the tunnel: the error says so', async () => {
    const proxy = await connectProxy('Basic nobody-has-this');
    const file = kubeconfig(
      `server: https://127.0.0.1:${byIp.port}\ncertificate-authority: ${caFile}\nproxy-url: http://127.0.0.1:${proxy.port}`,
      'token: t',
    );
    await assert.rejects(whoami(file), /GET \/whoami: .*Bad response: 407/);
    assert.deepEqual(proxy.tunnels, [{ target: `127.0.0.1:${byIp.port}`, auth: undefined }]);
  });
});
