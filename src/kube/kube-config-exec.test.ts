// Exec credential plugins, run for real: small shell scripts on disk that print an
// ExecCredential, count their runs and record what they were given.
import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync, existsSync } from 'node:fs';
import type https from 'node:https';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { KubeConfigError } from './kube-config-error.js';
import { loadKubeConfig } from './kube-config.js';
import { ExecCredentialPlugin, type ExecPluginConfig } from './kube-exec-credential.js';
import { appliedOptions, indented, kubeconfigText } from '../../test/support/kubeconfig-text.js';

const scratch = mkdtempSync(path.join(tmpdir(), 'kube-exec-test-'));
after(() => rmSync(scratch, { recursive: true, force: true }));
let counter = 0;
/** What the scripts need (sh, wc, sleep); the rest of this process's environment stays out. */
const shellEnv = { PATH: process.env.PATH };

interface Plugin {
  dir: string;
  script: string;
  /** How many times the script ran. */
  runs(): number;
  /** KUBERNETES_EXEC_INFO of the last run, parsed. */
  execInfo(): { apiVersion: string; kind: string; spec: { interactive: boolean; cluster?: Record<string, unknown> } };
  lastEnv(name: string): string;
}

/** A shell script plugin; `body` prints the answer (it may use $RUN, the run number). */
function plugin(body: string): Plugin {
  const dir = path.join(scratch, String(++counter));
  mkdirSync(dir, { recursive: true });
  const script = path.join(dir, 'plugin.sh');
  writeFileSync(script, `#!/bin/sh
echo run >> "${dir}/runs"
RUN=$(wc -l < "${dir}/runs" | tr -d ' ')
printf '%s' "$KUBERNETES_EXEC_INFO" > "${dir}/exec-info"
printf '%s' "$PLUGIN_PROFILE" > "${dir}/env-PLUGIN_PROFILE"
${body}
`, { mode: 0o755 });
  return {
    dir, script,
    runs: () => (existsSync(path.join(dir, 'runs')) ? readFileSync(path.join(dir, 'runs'), 'utf8').trim().split('\n').length : 0),
    execInfo: () => JSON.parse(readFileSync(path.join(dir, 'exec-info'), 'utf8')),
    lastEnv: (name) => readFileSync(path.join(dir, `env-${name}`), 'utf8'),
  };
}

const credential = (status: string, apiVersion = 'client.authentication.k8s.io/v1') =>
  `cat <<EOF\n{"apiVersion": "${apiVersion}", "kind": "ExecCredential", "status": ${status}}\nEOF`;

function kubeconfigFor(p: Plugin, exec: string, cluster = 'server: https://10.0.0.1:6443'): string {
  const file = path.join(p.dir, 'kubeconfig');
  writeFileSync(file, kubeconfigText(cluster, `exec:\n${indented(exec, 2)}`, { user: 'cloud-user' }));
  return file;
}

const v1 = (p: Plugin, more = '') => `apiVersion: client.authentication.k8s.io/v1\ncommand: ${p.script}\ninteractiveMode: Never${more ? `\n${more}` : ''}`;

const apply = appliedOptions;
const bearer = (o: https.RequestOptions) => (o.headers as Record<string, string>).Authorization;

describe('exec credential plugins', () => {
  it('a token: sent as a bearer token; the plugin gets args, env and KUBERNETES_EXEC_INFO (no cluster unless asked)', async () => {
    const p = plugin(credential('{"token": "tok-$RUN-$1"}'));
    const kc = loadKubeConfig({ env: shellEnv, path: kubeconfigFor(p, v1(p, 'args: [eu-west-1]\nenv:\n- {name: PLUGIN_PROFILE, value: staging}')) });
    assert.equal(bearer(await apply(kc)), 'Bearer tok-1-eu-west-1');
    assert.deepEqual(p.execInfo(), { apiVersion: 'client.authentication.k8s.io/v1', kind: 'ExecCredential', spec: { interactive: false } });
    assert.equal(p.lastEnv('PLUGIN_PROFILE'), 'staging');
  });

  it('without an expiry the credential is kept: one run for many requests, and for concurrent ones', async () => {
    const p = plugin(`sleep 0.2\n${credential('{"token": "tok-$RUN"}')}`);
    const kc = loadKubeConfig({ env: shellEnv, path: kubeconfigFor(p, v1(p)) });
    const all = await Promise.all([apply(kc), apply(kc), apply(kc)]);
    assert.deepEqual(all.map(bearer), ['Bearer tok-1', 'Bearer tok-1', 'Bearer tok-1']);
    assert.equal(bearer(await apply(kc)), 'Bearer tok-1');
    assert.equal(p.runs(), 1);
  });

  it('kept until expirationTimestamp: an expired credential makes the plugin run again', async () => {
    const expired = plugin(credential('{"token": "tok-$RUN", "expirationTimestamp": "2000-01-01T00:00:00Z"}'));
    const kc = loadKubeConfig({ env: shellEnv, path: kubeconfigFor(expired, v1(expired)) });
    assert.equal(bearer(await apply(kc)), 'Bearer tok-1');
    assert.equal(bearer(await apply(kc)), 'Bearer tok-2');
    assert.equal(expired.runs(), 2);

    const fresh = plugin(credential('{"token": "tok-$RUN", "expirationTimestamp": "2999-01-01T00:00:00Z"}'));
    const kc2 = loadKubeConfig({ env: shellEnv, path: kubeconfigFor(fresh, v1(fresh)) });
    await apply(kc2);
    assert.equal(bearer(await apply(kc2)), 'Bearer tok-1');
    assert.equal(fresh.runs(), 1);
  });

  it('expiry follows the clock: the same credential before, a new run after', async () => {
    const p = plugin(credential('{"token": "tok-$RUN", "expirationTimestamp": "2030-06-01T12:00:00Z"}'));
    let now = Date.parse('2030-06-01T11:59:59Z');
    const config: ExecPluginConfig = { command: p.script, args: [], env: [], apiVersion: 'client.authentication.k8s.io/v1' };
    const exec = new ExecCredentialPlugin(config, { user: 'u', env: shellEnv, timeoutMs: 10_000, now: () => now });
    const first = await exec.credential();
    assert.deepEqual(first, { token: 'tok-1', clientCertificateData: undefined, clientKeyData: undefined, expiresAt: Date.parse('2030-06-01T12:00:00Z') });
    assert.equal(await exec.credential(), first);
    now = Date.parse('2030-06-01T12:00:00Z');
    assert.equal((await exec.credential()).token, 'tok-2');
  });

  it('a rejected credential (401) makes the next request run the plugin again, once, and not for a stale rejection', async () => {
    const p = plugin(credential('{"token": "tok-$RUN"}'));
    const kc = loadKubeConfig({ env: shellEnv, path: kubeconfigFor(p, v1(p)) });
    const used = await apply(kc);
    const alsoUsed = await apply(kc);
    kc.credentialsRejected(used);
    const next = await apply(kc);
    assert.equal(bearer(next), 'Bearer tok-2');
    kc.credentialsRejected(alsoUsed); // a late 401 for the old token
    assert.equal(bearer(await apply(kc)), 'Bearer tok-2');
    assert.equal(p.runs(), 2);
  });

  it('provideClusterInfo: the cluster (server, CA bytes, tls-server-name, extension config) in KUBERNETES_EXEC_INFO; v1beta1', async () => {
    const ca = '-----BEGIN CERTIFICATE-----\nMIIBfake\n-----END CERTIFICATE-----\n';
    const p = plugin(credential('{"token": "t"}', 'client.authentication.k8s.io/v1beta1'));
    const cluster = `server: https://10.0.0.1:6443
certificate-authority-data: ${Buffer.from(ca).toString('base64')}
tls-server-name: api.internal
extensions:
- name: client.authentication.k8s.io/exec
  extension: {audience: "sts.example.com", retries: 3, verbose: true}`;
    const kc = loadKubeConfig({ env: shellEnv, path: kubeconfigFor(p, `apiVersion: client.authentication.k8s.io/v1beta1\ncommand: ${p.script}\nprovideClusterInfo: true`, cluster) });
    assert.equal(bearer(await apply(kc)), 'Bearer t');
    assert.deepEqual(p.execInfo(), {
      apiVersion: 'client.authentication.k8s.io/v1beta1', kind: 'ExecCredential',
      spec: {
        interactive: false,
        cluster: {
          server: 'https://10.0.0.1:6443', 'tls-server-name': 'api.internal',
          'certificate-authority-data': Buffer.from(ca).toString('base64'),
          config: { audience: 'sts.example.com', retries: 3, verbose: true },
        },
      },
    });
  });

  it('a relative command is resolved against the kubeconfig directory', async () => {
    const p = plugin(credential('{"token": "relative"}'));
    const kc = loadKubeConfig({ env: shellEnv, path: kubeconfigFor(p, `apiVersion: client.authentication.k8s.io/v1\ncommand: ./plugin.sh\ninteractiveMode: IfAvailable`) });
    assert.equal(bearer(await apply(kc)), 'Bearer relative');
  });

  it('static credentials win over the plugin, which then never runs (as in client-go)', async () => {
    const p = plugin(credential('{"token": "from-plugin"}'));
    const file = kubeconfigFor(p, v1(p)).replace(/$/, '');
    writeFileSync(file, readFileSync(file, 'utf8').replace('    exec:', '    token: static\n    exec:'));
    assert.equal(bearer(await apply(loadKubeConfig({ env: shellEnv, path: file }))), 'Bearer static');
    assert.equal(p.runs(), 0);
  });
});

describe('exec plugin failures are errors that say what the plugin said', () => {
  async function failure(body: string, more = '', timeoutMs?: number): Promise<string> {
    const p = plugin(body);
    const kc = loadKubeConfig({ env: shellEnv, path: kubeconfigFor(p, v1(p, more)), ...(timeoutMs ? { execTimeoutMs: timeoutMs } : {}) });
    const err = await apply(kc).then(() => undefined, (e: unknown) => e);
    assert.ok(err instanceof KubeConfigError, `a KubeConfigError, not ${String(err)}`);
    return err.message;
  }

  it('a non-zero exit: the exit code and the tail of stderr', async () => {
    const message = await failure('echo "line one" >&2\necho "error: SSO session expired, run aws sso login" >&2\nexit 3');
    assert.match(message, /exec plugin of user "cloud-user" \(.*plugin\.sh\) failed with exit code 3; stderr: line one\nerror: SSO session expired, run aws sso login$/);
  });

  it('malformed output', async () => {
    assert.match(await failure('echo "not json at all {"'), /printed no usable ExecCredential: .*; stderr: \(empty\)/);
    assert.match(await failure(credential('{"token": "t"}', 'client.authentication.k8s.io/v1beta1')),
      /printed no usable ExecCredential: the kubeconfig asks for client.authentication.k8s.io\/v1, the plugin answered "client.authentication.k8s.io\/v1beta1"/);
    assert.match(await failure('echo \'{"apiVersion": "client.authentication.k8s.io/v1", "kind": "ExecCredential"}\''), /it has no status/);
    assert.match(await failure(credential('{}')), /status has neither a token nor a client certificate and key/);
    assert.match(await failure(credential('{"clientCertificateData": "x"}')), /status has a client certificate or a key, not both/);
    assert.match(await failure(credential('{"token": "t", "expirationTimestamp": "tomorrow"}')), /status.expirationTimestamp "tomorrow" is not an RFC 3339 time/);
  });

  it('a command that is not installed: the install hint', async () => {
    const p = plugin('');
    const kc = loadKubeConfig({
      env: { PATH: '/nonexistent' },
      path: kubeconfigFor(p, 'apiVersion: client.authentication.k8s.io/v1\ncommand: gke-gcloud-auth-plugin\ninteractiveMode: Never\ninstallHint: "Install it: gcloud components install gke-gcloud-auth-plugin"'),
    });
    await assert.rejects(apply(kc), /exec plugin of user "cloud-user" \(gke-gcloud-auth-plugin\): command not found\nInstall it: gcloud components install gke-gcloud-auth-plugin/);
  });

  it('a plugin that hangs is killed after the timeout', async () => {
    const started = Date.now();
    // Long enough for a loaded machine to start the shell and let it write its line.
    assert.match(await failure('echo "waiting for browser login" >&2\nexec sleep 30', '', 1500), /no answer within 1500 ms; stderr: waiting for browser login/);
    assert.ok(Date.now() - started < 10_000);
  });

  it('a failed run is not kept: the next request tries again', async () => {
    const p = plugin(`if [ "$RUN" = 1 ]; then echo "throttled" >&2; exit 1; fi\n${credential('{"token": "tok-$RUN"}')}`);
    const kc = loadKubeConfig({ env: shellEnv, path: kubeconfigFor(p, v1(p)) });
    await assert.rejects(apply(kc), /failed with exit code 1; stderr: throttled/);
    assert.equal(bearer(await apply(kc)), 'Bearer tok-2');
  });
});
