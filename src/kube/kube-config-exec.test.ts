// Exec credential plugins, run for real by @kubernetes/client-node (loaded for them): small
// shell scripts on disk that print an ExecCredential, count their runs and record what they
// were given.
import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync, existsSync } from 'node:fs';
import type https from 'node:https';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { KubeConfigError } from './kube-config-error.js';
import { loadKubeConfig, type KubeConfigSource } from './kube-config.js';
import { appliedOptions, indented, kubeconfigText } from '../../test/support/kubeconfig-text.js';

const scratch = mkdtempSync(path.join(tmpdir(), 'kube-exec-test-'));
after(() => rmSync(scratch, { recursive: true, force: true }));
let counter = 0;
/** What the loader reads from the environment: nothing (client-node gives plugins this process's environment). */
const noEnv = {};

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
  writeFileSync(
    script,
    `#!/bin/sh
echo run >> "${dir}/runs"
RUN=$(wc -l < "${dir}/runs" | tr -d ' ')
printf '%s' "$KUBERNETES_EXEC_INFO" > "${dir}/exec-info"
printf '%s' "$PLUGIN_PROFILE" > "${dir}/env-PLUGIN_PROFILE"
${body}
`,
    { mode: 0o755 },
  );
  return {
    dir,
    script,
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

const v1 = (p: Plugin, more = '') =>
  `apiVersion: client.authentication.k8s.io/v1\ncommand: ${p.script}\ninteractiveMode: Never${more ? `\n${more}` : ''}`;

const apply = async (file: string, more: Partial<KubeConfigSource> = {}) =>
  appliedOptions(await loadKubeConfig({ env: noEnv, path: file, ...more }));
const bearer = (o: https.RequestOptions) => (o.headers as Record<string, string>).Authorization;

describe('exec credential plugins', () => {
  it('a token: sent as a bearer token; the plugin gets args, env and KUBERNETES_EXEC_INFO (no terminal)', async () => {
    const p = plugin(credential('{"token": "tok-$RUN-$1"}'));
    assert.equal(
      bearer(await apply(kubeconfigFor(p, v1(p, 'args: [eu-west-1]\nenv:\n- {name: PLUGIN_PROFILE, value: staging}')))),
      'Bearer tok-1-eu-west-1',
    );
    assert.deepEqual(p.execInfo(), { apiVersion: 'client.authentication.k8s.io/v1', kind: 'ExecCredential', spec: { interactive: false } });
    assert.equal(p.lastEnv('PLUGIN_PROFILE'), 'staging');
  });

  it('concurrent requests share one run; without an expiry, the next reading of credentials runs it again', async () => {
    const p = plugin(`sleep 0.2\n${credential('{"token": "tok-$RUN"}')}`);
    const kc = await loadKubeConfig({ env: noEnv, path: kubeconfigFor(p, v1(p)) });
    const all = await Promise.all([appliedOptions(kc), appliedOptions(kc), appliedOptions(kc)]);
    assert.deepEqual(all.map(bearer), ['Bearer tok-1', 'Bearer tok-1', 'Bearer tok-1']);
    assert.equal(p.runs(), 1);
    assert.equal(bearer(await appliedOptions(kc)), 'Bearer tok-2');
  });

  it('kept until expirationTimestamp: an expired credential makes the plugin run again', async () => {
    const expired = plugin(credential('{"token": "tok-$RUN", "expirationTimestamp": "2000-01-01T00:00:00Z"}'));
    const kc = await loadKubeConfig({ env: noEnv, path: kubeconfigFor(expired, v1(expired)) });
    assert.equal(bearer(await appliedOptions(kc)), 'Bearer tok-1');
    assert.equal(bearer(await appliedOptions(kc)), 'Bearer tok-2');
    assert.equal(expired.runs(), 2);

    const fresh = plugin(credential('{"token": "tok-$RUN", "expirationTimestamp": "2999-01-01T00:00:00Z"}'));
    const kc2 = await loadKubeConfig({ env: noEnv, path: kubeconfigFor(fresh, v1(fresh)) });
    await appliedOptions(kc2);
    assert.equal(bearer(await appliedOptions(kc2)), 'Bearer tok-1');
    assert.equal(fresh.runs(), 1);
  });

  it('a rejected credential (401) makes the next request run the plugin again, once, and not for a stale rejection', async () => {
    const p = plugin(credential('{"token": "tok-$RUN", "expirationTimestamp": "2999-01-01T00:00:00Z"}'));
    const kc = await loadKubeConfig({ env: noEnv, path: kubeconfigFor(p, v1(p)) });
    const used = await appliedOptions(kc);
    const alsoUsed = await appliedOptions(kc);
    kc.credentialsRejected!(used);
    const next = await appliedOptions(kc);
    assert.equal(bearer(next), 'Bearer tok-2');
    kc.credentialsRejected!(alsoUsed); // a late 401 for the old token
    assert.equal(bearer(await appliedOptions(kc)), 'Bearer tok-2');
    assert.equal(p.runs(), 2);
  });

  it('a relative command is resolved against the kubeconfig directory', async () => {
    const p = plugin(credential('{"token": "relative"}'));
    assert.equal(
      bearer(
        await apply(kubeconfigFor(p, `apiVersion: client.authentication.k8s.io/v1\ncommand: ./plugin.sh\ninteractiveMode: IfAvailable`)),
      ),
      'Bearer relative',
    );
  });

  it('a static token wins over the plugin (as in client-go)', async () => {
    const p = plugin(credential('{"token": "from-plugin"}'));
    const file = kubeconfigFor(p, v1(p));
    writeFileSync(file, readFileSync(file, 'utf8').replace('    exec:', '    token: static\n    exec:'));
    assert.equal(bearer(await apply(file)), 'Bearer static');
  });
});

describe('exec plugin failures are errors that say what the plugin said', () => {
  async function failure(p: Plugin, exec = v1(p), timeoutMs?: number): Promise<KubeConfigError> {
    const err = await apply(kubeconfigFor(p, exec), timeoutMs ? { execTimeoutMs: timeoutMs } : {}).then(
      () => undefined,
      (e: unknown) => e,
    );
    assert.ok(err instanceof KubeConfigError, `a KubeConfigError, not ${String(err)}`);
    return err;
  }

  it('a non-zero exit: its stderr, worth a retry', async () => {
    const err = await failure(plugin('echo "line one" >&2\necho "error: SSO session expired, run aws sso login" >&2\nexit 3'));
    assert.match(err.message, /^user "cloud-user" \(exec plugin .*plugin\.sh\): line one\nerror: SSO session expired, run aws sso login$/);
    assert.equal(err.transient, true);
  });

  it('output that is not JSON', async () => {
    assert.match(
      (await failure(plugin('echo "not json at all {"'))).message,
      /^user "cloud-user" \(exec plugin .*plugin\.sh\): [^]*is not valid JSON$/,
    );
  });

  it('a command that is not installed: the install hint, not worth a retry', async () => {
    const exec =
      'apiVersion: client.authentication.k8s.io/v1\ncommand: gke-gcloud-auth-plugin-not-installed\ninteractiveMode: Never\ninstallHint: "Install it: gcloud components install gke-gcloud-auth-plugin"';
    const err = await failure(plugin(''), exec);
    assert.match(
      err.message,
      /exec plugin gke-gcloud-auth-plugin-not-installed\): spawn gke-gcloud-auth-plugin-not-installed ENOENT\nInstall it: gcloud components install gke-gcloud-auth-plugin$/,
    );
    assert.equal(err.transient, false);
  });

  it('a plugin that does not answer in time fails the request (client-node leaves it running)', async () => {
    const started = Date.now();
    const err = await failure(plugin('echo "waiting for browser login" >&2\nexec sleep 3'), undefined, 1000);
    assert.match(err.message, /no credentials within 1000 ms/);
    assert.equal(err.transient, true);
    assert.ok(Date.now() - started < 2500);
  });

  it('a failed run is not kept: the next request tries again', async () => {
    const p = plugin(`if [ "$RUN" = 1 ]; then echo "throttled" >&2; exit 1; fi\n${credential('{"token": "tok-$RUN"}')}`);
    const kc = await loadKubeConfig({ env: noEnv, path: kubeconfigFor(p, v1(p)) });
    await assert.rejects(appliedOptions(kc), /: throttled$/);
    assert.equal(bearer(await appliedOptions(kc)), 'Bearer tok-2');
  });
});
