// The kubeconfig loader: which file and context it picks, how files merge, and exactly which
// TLS options and headers each kind of credential puts on a request, read by the lean reader
// (token, client certificate, in-cluster) or, for the laptop cases, by @kubernetes/client-node.
import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import type https from 'node:https';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { KubeConfigError } from './kube-config-error.js';
import { loadKubeConfig, type KubeConfigSource } from './kube-config.js';
import { appliedOptions, kubeconfigText } from '../../test/support/kubeconfig-text.js';

const scratch = mkdtempSync(path.join(tmpdir(), 'kube-config-test-'));
after(() => rmSync(scratch, { recursive: true, force: true }));
let counter = 0;

/** A fresh directory under the scratch folder. */
function dir(): string {
  const d = path.join(scratch, String(++counter));
  mkdirSync(d, { recursive: true });
  return d;
}

function write(file: string, text: string, mode = 0o600): string {
  mkdirSync(path.dirname(file), { recursive: true });
  writeFileSync(file, text, { mode });
  return file;
}

// Not parsed by the loader (node verifies the server with it); it must only look like PEM.
const fakeCa = '-----BEGIN CERTIFICATE-----\nMIIBfakeCA\n-----END CERTIFICATE-----\n';
const b64 = (s: string) => Buffer.from(s).toString('base64');

/** A kubeconfig with one context `ctx` joining `cluster` and `user` (YAML fragments). */
const kubeconfig = (cluster: string, user = 'token: t0k3n', extra = '') => kubeconfigText(cluster, user, {}, extra);

/** Applies the loaded kubeconfig to empty options, as the client does. */
const applied = async (source: KubeConfigSource): Promise<https.RequestOptions> =>
  appliedOptions(await loadKubeConfig({ env: {}, ...source }));

async function loadError(source: KubeConfigSource): Promise<string> {
  const err = await loadKubeConfig({ env: {}, ...source }).then(
    () => assert.fail('expected loadKubeConfig to throw'),
    (e: unknown) => e,
  );
  assert.ok(err instanceof KubeConfigError, `a KubeConfigError, not ${String(err)}`);
  return err.message;
}

describe('which kubeconfig', () => {
  const serverOf = async (source: KubeConfigSource) => (await loadKubeConfig({ env: {}, ...source })).getCurrentCluster().server;

  it('an explicit path wins over KUBECONFIG, in-cluster and ~/.kube/config', async () => {
    const d = dir();
    const explicit = write(path.join(d, 'explicit'), kubeconfig('server: https://explicit:6443'));
    const fromEnv = write(path.join(d, 'env'), kubeconfig('server: https://env:6443'));
    const home = path.join(d, 'home');
    write(path.join(home, '.kube', 'config'), kubeconfig('server: https://home:6443'));
    const sa = path.join(d, 'sa');
    write(path.join(sa, 'token'), 'pod-token');
    const inPod = { KUBERNETES_SERVICE_HOST: '10.96.0.1', KUBERNETES_SERVICE_PORT: '443' };

    assert.equal(
      await serverOf({ path: explicit, env: { KUBECONFIG: fromEnv, ...inPod }, serviceAccountDir: sa, homeDir: home }),
      'https://explicit:6443',
    );
    assert.equal(await serverOf({ env: { KUBECONFIG: fromEnv, ...inPod }, serviceAccountDir: sa, homeDir: home }), 'https://env:6443');
    assert.equal(await serverOf({ env: inPod, serviceAccountDir: sa, homeDir: home }), 'https://10.96.0.1:443');
    assert.equal(await serverOf({ env: {}, serviceAccountDir: sa, homeDir: home }), 'https://home:6443', 'no service host: not in a pod');
    assert.equal(
      await serverOf({ env: inPod, serviceAccountDir: path.join(d, 'none'), homeDir: home }),
      'https://home:6443',
      'no token: not in a pod',
    );
  });

  it('nothing to use: says where it looked', async () => {
    const d = dir();
    assert.match(
      await loadError({ env: {}, serviceAccountDir: path.join(d, 'sa'), homeDir: d }),
      /no Kubernetes credentials: set KUBECONFIG, pass a kubeconfig path, run in a pod with a ServiceAccount, or create ~\/\.kube\/config/,
    );
  });

  it('an explicit file that does not exist is an error naming it', async () => {
    const missing = path.join(dir(), 'nope');
    assert.match(await loadError({ path: missing }), new RegExp(`cannot read kubeconfig ${missing}: ENOENT`));
  });

  it('several files (KUBECONFIG style, through client-node): the first that defines a name wins, current-context from the first that sets one, missing files skipped', async () => {
    const d = dir();
    const first = write(
      path.join(d, 'first'),
      `
clusters:
- name: shared
  cluster: {server: "https://first:6443"}
users:
- name: shared
  user: {token: first-token}
`,
    );
    const second = write(
      path.join(d, 'second'),
      `
current-context: second-ctx
clusters:
- name: shared
  cluster: {server: "https://second:6443"}
- name: only-second
  cluster: {server: "https://only-second:6443"}
users:
- name: shared
  user: {token: second-token}
contexts:
- name: second-ctx
  context: {cluster: shared, user: shared, namespace: team-a}
- name: other
  context: {cluster: only-second, user: shared}
current-context: second-ctx
`.replace(/current-context: second-ctx\n$/, ''),
    );
    const third = write(path.join(d, 'third'), 'current-context: other\n');
    const list = [path.join(d, 'missing'), first, second, third].join(path.delimiter);

    const kc = await loadKubeConfig({ env: { KUBECONFIG: list } });
    assert.equal(kc.getCurrentContext(), 'second-ctx', 'current-context of the first file that sets one');
    assert.equal(kc.getCurrentCluster().server, 'https://first:6443', 'cluster "shared" of the first file');
    assert.equal(kc.namespace, 'team-a');
    assert.equal((await loadKubeConfig({ path: list, context: 'other' })).getCurrentCluster().server, 'https://only-second:6443');
    assert.match(
      await loadError({ path: [path.join(d, 'x'), path.join(d, 'y')].join(path.delimiter) }),
      /none of the kubeconfig files exists: .*x, .*y/,
    );
    assert.match(
      await loadError({ path: list, context: 'staging' }),
      /context "staging" is not defined in .*first, .*second, .*third \(contexts: second-ctx, other\)/,
    );
    const broken = write(path.join(d, 'broken'), 'contexts:\n- name: broken\n  context: {cluster: gone, user: missing}\n');
    assert.match(
      await loadError({ path: [broken, first].join(path.delimiter), context: 'broken' }),
      /context "broken" names cluster "gone" and user "missing", not defined in/,
    );
  });

  it('merged users: the first definition is the one whose credentials are sent', async () => {
    const d = dir();
    const a = write(path.join(d, 'a'), kubeconfig('server: https://a:6443', 'token: from-a'));
    const b = write(path.join(d, 'b'), kubeconfig('server: https://b:6443', 'token: from-b'));
    const options = await applied({ path: [a, b].join(path.delimiter) });
    assert.equal((options.headers as Record<string, string>).Authorization, 'Bearer from-a');
  });

  it('relative paths are resolved against the directory of the file that names them', async () => {
    const d = dir();
    write(path.join(d, 'conf', 'certs', 'ca.pem'), fakeCa);
    write(path.join(d, 'conf', 'token'), 'relative-token\n');
    const file = write(
      path.join(d, 'conf', 'kubeconfig'),
      kubeconfig('server: https://k:6443\ncertificate-authority: certs/ca.pem', 'tokenFile: ./token'),
    );
    // Loaded from another working directory, through a relative path of its own.
    const options = await applied({ path: path.relative(process.cwd(), file) });
    assert.equal(String(options.ca), fakeCa);
    assert.equal((options.headers as Record<string, string>).Authorization, 'Bearer relative-token');
  });

  it('YAML scalars are read as written: a numeric token stays a string, `yes` is true, JSON works', async () => {
    const d = dir();
    const yaml = write(path.join(d, 'yaml'), kubeconfig('server: https://k:6443\ninsecure-skip-tls-verify: yes', 'token: 000123'));
    const options = await applied({ path: yaml });
    assert.equal((options.headers as Record<string, string>).Authorization, 'Bearer 000123');
    assert.equal(options.rejectUnauthorized, false);
    const json = write(
      path.join(d, 'json'),
      JSON.stringify({
        'current-context': 'j',
        clusters: [{ name: 'c', cluster: { server: 'https://json:6443', 'insecure-skip-tls-verify': true } }],
        users: [{ name: 'u', user: { token: 'json-token' } }],
        contexts: [{ name: 'j', context: { cluster: 'c', user: 'u' } }],
      }),
    );
    assert.equal((await loadKubeConfig({ path: json })).getCurrentCluster().server, 'https://json:6443');
  });
});

describe('context selection', () => {
  const d = dir();
  const file = write(
    path.join(d, 'kubeconfig'),
    `
current-context: dev
clusters:
- name: dev-cluster
  cluster: {server: "https://dev:6443/"}
- name: prod-cluster
  cluster: {server: "https://prod.example.com/k8s/clusters/c-1"}
users:
- name: dev-user
  user: {token: dev}
- name: prod-user
  user: {token: prod}
contexts:
- name: dev
  context: {cluster: dev-cluster, user: dev-user}
- name: prod
  context: {cluster: prod-cluster, user: prod-user, namespace: shop}
- name: broken
  context: {cluster: gone, user: missing}
- name: anonymous
  context: {cluster: dev-cluster}
`,
  );

  it('the current context by default, another by name; the server keeps its path prefix, loses its trailing slash', async () => {
    const dev = await loadKubeConfig({ path: file });
    assert.equal(dev.getCurrentContext(), 'dev');
    assert.deepEqual(dev.getCurrentCluster(), { name: 'dev-cluster', server: 'https://dev:6443' });
    assert.equal(dev.namespace, undefined);
    const prod = await loadKubeConfig({ path: file, context: 'prod' });
    assert.equal(prod.getCurrentCluster().server, 'https://prod.example.com/k8s/clusters/c-1');
    assert.equal(prod.namespace, 'shop');
    assert.equal(((await applied({ path: file, context: 'prod' })).headers as Record<string, string>).Authorization, 'Bearer prod');
  });

  it('a context without a user sends no credentials', async () => {
    const options = await applied({ path: file, context: 'anonymous' });
    assert.deepEqual(options.headers, {});
    assert.equal(options.auth, undefined);
  });

  it('an unknown context lists the ones there are; a broken one names every missing part', async () => {
    assert.match(
      await loadError({ path: file, context: 'staging' }),
      /context "staging" is not defined in .*kubeconfig \(contexts: dev, prod, broken, anonymous\)/,
    );
    const broken = await loadError({ path: file, context: 'broken' });
    assert.match(broken, /context "broken" names cluster "gone", which .* does not define/);
    assert.match(broken, /context "broken" names user "missing", which .* does not define/);
  });

  it('no current-context and none asked for', async () => {
    const f = write(path.join(dir(), 'k'), 'clusters: null\nusers: null\ncontexts: null\n');
    assert.match(await loadError({ path: f }), /sets no current-context; choose one with --context/);
  });

  it('malformed files say where', async () => {
    const d2 = dir();
    assert.match(await loadError({ path: write(path.join(d2, 'a'), 'clusters: [\n') }), /kubeconfig .*a is not valid YAML/);
    assert.match(await loadError({ path: write(path.join(d2, 'b'), 'clusters: {a: 1}\n') }), /kubeconfig .*b: clusters must be a list/);
    assert.match(
      await loadError({ path: write(path.join(d2, 'c'), 'clusters:\n- cluster: {server: x}\n') }),
      /kubeconfig .*c: clusters\[0\] has no name/,
    );
    assert.match(
      await loadError({ path: write(path.join(d2, 'd'), kubeconfig('server: https://k\ninsecure-skip-tls-verify: maybe')) }),
      /cluster "c" in .*d: insecure-skip-tls-verify must be true or false, not "maybe"/,
    );
    assert.match(
      await loadError({ path: write(path.join(d2, 'e'), kubeconfig('server: k8s.local:6443')) }),
      /cluster "c": server "k8s.local:6443" must be an https:\/\/ \(or http:\/\/\) URL/,
    );
    assert.match(
      await loadError({ path: write(path.join(d2, 'f'), kubeconfig('certificate-authority-data: "not base64!"')) }),
      /cluster "c" has no server[\s\S]*certificate-authority-data is not valid base64/,
    );
  });
});

describe('credentials on a request', () => {
  it('cluster: certificate-authority-data, tls-server-name; user: token', async () => {
    const file = write(
      path.join(dir(), 'k'),
      kubeconfig(`server: https://10.0.0.1:6443\ncertificate-authority-data: ${b64(fakeCa)}\ntls-server-name: api.internal`, 'token: abc'),
    );
    const options = await applied({ path: file });
    assert.deepEqual(
      { ...options, ca: String(options.ca) },
      {
        headers: { Authorization: 'Bearer abc' },
        ca: fakeCa,
        servername: 'api.internal',
      },
    );
  });

  it('certificate-authority file, read again when applied (a rotated CA is seen)', async () => {
    const d = dir();
    const ca = write(path.join(d, 'ca.crt'), fakeCa);
    const kc = await loadKubeConfig({
      env: {},
      path: write(path.join(d, 'k'), kubeconfig(`server: https://k:6443\ncertificate-authority: ${ca}`)),
    });
    const first: https.RequestOptions = {};
    await kc.applyToHTTPSOptions(first);
    assert.equal(String(first.ca), fakeCa);
    const rotated = fakeCa.replace('fakeCA', 'rotatedCA');
    writeFileSync(ca, rotated);
    const second: https.RequestOptions = {};
    await kc.applyToHTTPSOptions(second);
    assert.equal(String(second.ca), rotated);
  });

  it('a CA that holds no certificate is refused (node would silently fall back to nothing)', async () => {
    const file = write(path.join(dir(), 'k'), kubeconfig(`server: https://k:6443\ncertificate-authority-data: ${b64('just text')}`));
    await assert.rejects(applied({ path: file }), /cluster "c": certificate-authority-data holds no PEM certificate/);
  });

  it('insecure-skip-tls-verify: rejectUnauthorized false and no CA', async () => {
    const options = await applied({
      path: write(path.join(dir(), 'k'), kubeconfig('server: https://k:6443\ninsecure-skip-tls-verify: true')),
    });
    assert.equal(options.rejectUnauthorized, false);
    assert.equal(options.ca, undefined);
  });

  it('without a CA: node verifies against the system roots (rejectUnauthorized left unset)', async () => {
    const options = await applied({ path: write(path.join(dir(), 'k'), kubeconfig('server: https://k:6443')) });
    assert.equal(options.rejectUnauthorized, undefined);
    assert.equal(options.ca, undefined);
  });

  it('username/password (through client-node): basic auth', async () => {
    const options = await applied({
      path: write(path.join(dir(), 'k'), kubeconfig('server: https://k:6443', 'username: admin\npassword: "s3cr:et"')),
    });
    assert.equal(options.auth, 'admin:s3cr:et');
    assert.deepEqual(options.headers, {});
  });

  it('impersonation (through client-node, which sends Impersonate-User only)', async () => {
    const options = await applied({ path: write(path.join(dir(), 'k'), kubeconfig('server: https://k:6443', 'token: t\nas: jane')) });
    assert.deepEqual(options.headers, { Authorization: 'Bearer t', 'Impersonate-User': 'jane' });
  });

  it("an auth provider (through client-node): a gcp provider's cached access-token", async () => {
    const user = 'auth-provider:\n  name: gcp\n  config: {access-token: ya29.cached, expiry: "2999-01-01T00:00:00Z"}';
    const options = await applied({ path: write(path.join(dir(), 'k'), kubeconfig('server: https://k:6443', user)) });
    assert.deepEqual(options.headers, { Authorization: 'Bearer ya29.cached' });
  });

  it('an http:// server gets no credentials (as with kubectl: plain HTTP is a local proxy)', async () => {
    const options = await applied({ path: write(path.join(dir(), 'k'), kubeconfig('server: http://127.0.0.1:8001', 'token: secret')) });
    assert.deepEqual(options, { headers: {} });
  });

  it('tokenFile: read again on every apply (a rotated token is seen), trimmed', async () => {
    const d = dir();
    const tokenFile = write(path.join(d, 'token'), 'first\n');
    const kc = await loadKubeConfig({
      env: {},
      path: write(path.join(d, 'k'), kubeconfig('server: https://k:6443', `tokenFile: ${tokenFile}`)),
    });
    const bearer = async () => {
      const o: https.RequestOptions = {};
      await kc.applyToHTTPSOptions(o);
      return (o.headers as Record<string, string>).Authorization;
    };
    assert.equal(await bearer(), 'Bearer first');
    writeFileSync(tokenFile, '  second  \n');
    assert.equal(await bearer(), 'Bearer second');
    rmSync(tokenFile);
    await assert.rejects(bearer(), /user "u": cannot read tokenFile .*token: ENOENT/);
  });

  it('tokenFile with an inline token: the file while it can be read, the inline token otherwise', async () => {
    const d = dir();
    const tokenFile = write(path.join(d, 'token'), 'from-file');
    const kc = await loadKubeConfig({
      env: {},
      path: write(path.join(d, 'k'), kubeconfig('server: https://k:6443', `token: inline\ntokenFile: ${tokenFile}`)),
    });
    const o1: https.RequestOptions = {};
    await kc.applyToHTTPSOptions(o1);
    assert.equal((o1.headers as Record<string, string>).Authorization, 'Bearer from-file');
    rmSync(tokenFile);
    const o2: https.RequestOptions = {};
    await kc.applyToHTTPSOptions(o2);
    assert.equal((o2.headers as Record<string, string>).Authorization, 'Bearer inline');
  });

  it('files that cannot be read fail at load, naming the field and the file', async () => {
    const d = dir();
    assert.match(
      await loadError({ path: write(path.join(d, 'a'), kubeconfig(`server: https://k\ncertificate-authority: ${d}/missing-ca`)) }),
      /cluster "c": certificate-authority .*missing-ca cannot be read: ENOENT/,
    );
    assert.match(
      await loadError({ path: write(path.join(d, 'b'), kubeconfig('server: https://k', `tokenFile: ${d}/missing-token`)) }),
      /user "u": tokenFile .*missing-token cannot be read/,
    );
  });
});

describe('in-cluster', () => {
  function pod(host: string) {
    const sa = dir();
    write(path.join(sa, 'token'), 'bound-token-1\n');
    write(path.join(sa, 'ca.crt'), fakeCa);
    write(path.join(sa, 'namespace'), 'preview-system');
    return { sa, env: { KUBERNETES_SERVICE_HOST: host, KUBERNETES_SERVICE_PORT: '443' } };
  }

  it('the Service from the environment, the ServiceAccount CA, token and namespace; the token is re-read (bound tokens rotate)', async () => {
    const { sa, env } = pod('10.96.0.1');
    const kc = await loadKubeConfig({ env, serviceAccountDir: sa });
    assert.equal(kc.getCurrentCluster().server, 'https://10.96.0.1:443');
    assert.equal(kc.namespace, 'preview-system');
    const first: https.RequestOptions = {};
    await kc.applyToHTTPSOptions(first);
    assert.deepEqual({ ...first, ca: String(first.ca) }, { headers: { Authorization: 'Bearer bound-token-1' }, ca: fakeCa });
    writeFileSync(path.join(sa, 'token'), 'bound-token-2\n');
    const second: https.RequestOptions = {};
    await kc.applyToHTTPSOptions(second);
    assert.equal((second.headers as Record<string, string>).Authorization, 'Bearer bound-token-2');
  });

  it('an IPv6 service host is bracketed', async () => {
    const { sa, env } = pod('fd00:10:96::1');
    assert.equal((await loadKubeConfig({ env, serviceAccountDir: sa })).getCurrentCluster().server, 'https://[fd00:10:96::1]:443');
  });

  it('a context asked for in a pod without a kubeconfig is an error, not ignored', async () => {
    const { sa, env } = pod('10.96.0.1');
    assert.match(
      await loadError({ env, serviceAccountDir: sa, context: 'prod' }),
      /context "prod" was asked for, but no kubeconfig file is in use/,
    );
  });
});

describe('refused with a clear error', () => {
  const refused = (cluster: string, user = 'token: t') => loadError({ path: write(path.join(dir(), 'k'), kubeconfig(cluster, user)) });

  it('conflicting or incomplete settings, all listed at once', async () => {
    const message = await refused(
      `server: https://k\ncertificate-authority: /etc/ca.crt\ncertificate-authority-data: ${b64(fakeCa)}\ninsecure-skip-tls-verify: true`,
      'token: t\nclient-certificate-data: AAAA',
    );
    assert.match(message, /kubeconfig context "ctx" cannot be used:/);
    assert.match(message, /- cluster "c": certificate-authority and certificate-authority-data are both set; keep one/);
    assert.match(message, /- cluster "c": insecure-skip-tls-verify with a certificate authority is not allowed/);
    assert.match(message, /- user "u": client-key or client-key-data must be set to use a client certificate/);
  });

  it('a namespace that is not a DNS label', async () => {
    const f = write(
      path.join(dir(), 'k'),
      kubeconfig('server: https://k').replace('context: {cluster: c, user: u}', 'context: {cluster: c, user: u, namespace: Team_A}'),
    );
    assert.match(await loadError({ path: f }), /context "ctx": namespace "Team_A" is not a valid namespace name/);
  });

  it(
    'a file that cannot be read (permissions), not mistaken for a missing one',
    { skip: process.getuid?.() === 0 ? 'root reads every file' : false },
    async () => {
      const f = write(path.join(dir(), 'k'), kubeconfig('server: https://k'));
      chmodSync(f, 0o000);
      assert.match(await loadError({ path: f }), /cannot read kubeconfig .*k: EACCES/);
    },
  );
});
