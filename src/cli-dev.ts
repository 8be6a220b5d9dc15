// `preview-operator dev` (npm run dev): the whole product on one machine with nothing
// configured. It starts a local Kubernetes control plane (or uses the cluster KUBECONFIG
// names), the GitHub emulator, installs the CRDs, runs the operator in this process, creates
// a demo repository with a `.preview/`, opens a pull request, delivers its signed webhook and
// shows the environment converging. It stays up until Ctrl-C, then tears everything down.
// It uses the project's test harness (control plane, emulator), so it runs from a source
// checkout only; the image's build leaves this file out.
import { createWriteStream } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { startCluster, type Cluster } from '../test/cluster/start-cluster.js';
import { installCrds, operatorCrdFiles } from '../test/fixtures/crds/install-crds.js';
import { GitHubEmulator } from '../test/github-emulator/emulator.js';
import { PullRequestDriver } from '../test/github-emulator/pull-requests.js';
import type { CliIo } from './cli.js';
import { startOperator, type RunningOperator } from './cli-run.js';
import { ConfigError, loadConfig } from './config.js';
import { previewEnvironmentKind } from './github/environment-store.js';
import { environmentName } from './github/pull-request-environment-name.js';
import { KubeClient, loadKubeConfig, type KubeAccess } from './kube/client.js';
import type { KubeObject } from './kube/kube-object.js';
import { createLogger } from './logger.js';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const demoOwner = 'demo';
const demoRepository = 'shop';

/** What `dev` sets unless a flag or variable says otherwise. */
function embeddedDefaults(ghUrl: string, appId: number, keyFile: string, secretFile: string): Record<string, string> {
  return {
    'controllers': 'algorithm,database,preview-environment,webhook',
    'leader-elect': 'false',
    'webhook-host': '127.0.0.1',
    'webhook-port': '0',
    'metrics-port': '0',
    'webhook-secret-file': secretFile,
    'github-api-url': ghUrl,
    'github-app-id': String(appId),
    'github-app-private-key-file': keyFile,
    // The demo repository is on disk: the emulator serves its `.preview/` over the API, and git
    // checks it out from there (file://) to run its `.preview/main.ts`.
    'git-allowed-protocols': 'https,file',
    'preview-domain': 'preview.localhost',
    // No cert-manager (and no issuer) on the local control plane: plain HTTP, no Certificate.
    'tls-issuer': 'none',
    'log-level': 'info',
  };
}

interface Phase {
  phase?: string;
  url?: string;
  namespace?: string;
  resources?: { kind: string; name: string; ready: boolean; message?: string }[];
  conditions?: { type: string; status: string; reason?: string; message?: string }[];
}

export async function runDev(args: readonly string[], env: Readonly<Record<string, string | undefined>>, io: CliIo): Promise<number> {
  const say = (line: string) => io.stdout(`${line}\n`);
  const workDir = await mkdtemp(path.join(os.tmpdir(), 'preview-operator-dev-'));
  const teardown: (() => Promise<unknown>)[] = [async () => rm(workDir, { recursive: true, force: true })];
  const stopAll = async () => {
    for (const step of teardown.reverse()) await step().catch((err) => io.stderr(`teardown: ${(err as Error).message}\n`));
  };
  let stopRequested: () => void = () => {};
  const stopped = new Promise<void>((resolve) => (stopRequested = resolve));
  const onSignal = () => stopRequested();
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);

  try {
    // 1. A cluster: the one KUBECONFIG names, or a local control plane.
    let kubeConfig: KubeAccess;
    let kubeconfigPath: string;
    if (env.KUBECONFIG) {
      const loaded = loadKubeConfig({ env });
      kubeConfig = loaded;
      kubeconfigPath = env.KUBECONFIG;
      say(`cluster: ${loaded.getCurrentCluster().server} (context ${loaded.getCurrentContext()}, from KUBECONFIG)`);
    } else {
      say('cluster: starting a local control plane (etcd, kube-apiserver, controller-manager, scheduler, a simulated node)…');
      const cluster: Cluster = await startCluster({ log: (line) => io.stderr(`  ${line}\n`) });
      teardown.push(() => cluster.stop());
      kubeConfig = cluster.kubeConfig;
      kubeconfigPath = cluster.kubeconfigPath;
      say(`cluster: ${cluster.server}`);
    }
    // Not cert-manager's Certificate: without cert-manager running no certificate would ever be
    // issued, and without its CRD the operator serves previews over plain HTTP, saying so.
    await installCrds(kubeConfig, operatorCrdFiles);
    say('CRDs: PreviewEnvironment, Algorithm, Database installed');

    // 2. GitHub: the emulator, an App installed on a demo repository that has a .preview/.
    const gh = await GitHubEmulator.start();
    teardown.push(() => gh.close());
    const app = gh.createApp({ slug: 'preview-operator-dev' });
    const webhookSecret = (await import('node:crypto')).randomBytes(20).toString('hex');
    const preview = path.join(root, 'examples/repository/.preview');
    const repo = await PullRequestDriver.create(gh, {
      owner: demoOwner, name: demoRepository, webhookSecret,
      initialFiles: {
        'README.md': '# shop\n\nThe demo repository of `preview-operator dev`.\n',
        '.preview/preview.yaml': await readFile(path.join(preview, 'preview.yaml'), 'utf8'),
        '.preview/main.ts': await readFile(path.join(preview, 'main.ts'), 'utf8'),
      },
    });
    teardown.push(() => repo.cleanup());
    gh.installApp(app.id, [repo.repository]);
    say(`GitHub emulator: ${gh.url} (App ${app.slug} installed on ${demoOwner}/${demoRepository})`);

    // 3. The operator, configured like a real one (flags and variables still win).
    const keyFile = path.join(workDir, 'app-key.pem');
    const secretFile = path.join(workDir, 'webhook-secret');
    await writeFile(keyFile, app.privateKey, { mode: 0o600 });
    await writeFile(secretFile, webhookSecret, { mode: 0o600 });
    let config;
    try {
      config = loadConfig({ args, env: { ...env, KUBECONFIG: undefined }, purpose: 'run', defaults: embeddedDefaults(gh.url, app.id, keyFile, secretFile) });
    } catch (err) {
      if (!(err instanceof ConfigError)) throw err;
      io.stderr(`${err.message}\n`);
      return 2;
    }
    const logFile = path.join(workDir, 'operator.log');
    const logger = createLogger({ level: config.logLevel, destination: createWriteStream(logFile) });
    const operator: RunningOperator = await startOperator(config, { logger, kubeConfig, cloneUrl: () => repo.cloneUrl });
    teardown.push(() => operator.stop());
    say(`operator: running ${config.controllers.join(', ')}; its JSON log: ${logFile}`);
    say('');
    say(`export KUBECONFIG=${kubeconfigPath}`);
    say(`webhook: ${operator.webhookUrl}`);
    say(`metrics: ${operator.metricsUrl}`);
    say(`webhook secret (to sign your own deliveries): ${secretFile}`);
    say('');

    // 4. A pull request, and its webhook.
    const { delivery } = await repo.open({ files: { 'README.md': '# shop\n\nA change worth a preview.\n' }, author: 'alice', authorAssociation: 'MEMBER', title: 'Try preview-operator' });
    // Answered 202 once queued: the PreviewEnvironment is written just after (the watch below shows it).
    const answer = await delivery.deliver(operator.webhookUrl);
    say(`pull request #1 opened by alice; webhook answered ${answer.status} ${answer.body}`);

    // 5. Watch it converge, and keep watching (a second terminal may push, label, close) until Ctrl-C.
    say('watching the environment converge; Ctrl-C tears everything down.');
    say('');
    const name = environmentName({ owner: demoOwner, name: demoRepository }, 1);
    await watchEnvironment(new KubeClient(kubeConfig), name, say, stopped, () => {
      const comments = gh.comments(repo.repository, 1);
      if (comments.length === 0) return;
      say('the pull request comment:');
      for (const line of comments[comments.length - 1]!.body.split('\n')) say(`  | ${line}`);
    });
    say('stopping…');
    return 0;
  } catch (err) {
    io.stderr(`preview-operator dev: ${(err as Error).message}\n`);
    return 1;
  } finally {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
    await stopAll();
  }
}

/** Prints each change of the environment's phase and resources until `stopped`; `settled` runs on each arrival at Ready or Failed. */
async function watchEnvironment(client: KubeClient, name: string, say: (line: string) => void, stopped: Promise<void>, settled: () => void): Promise<void> {
  const path = await client.pathOf({ ...previewEnvironmentKind, name });
  let last = '';
  let lastPhase: string | undefined;
  // The webhook's write lands just after its answer: "gone" only once it has been seen.
  let seen = false;
  let done = false;
  void stopped.then(() => (done = true));
  while (!done) {
    const env = await client.request<KubeObject & { status?: Phase }>({ path }).catch(() => undefined);
    seen ||= env !== undefined;
    const status = env?.status ?? {};
    const resources = (status.resources ?? []).map((r) => `${r.kind}/${r.name} ${r.ready ? 'ready' : `not ready${r.message ? ` (${r.message})` : ''}`}`);
    const line = env ? `environment ${name}: ${status.phase ?? 'Pending'}${status.namespace ? `, namespace ${status.namespace}` : ''}${status.url ? `, ${status.url}` : ''}` : `environment ${name}: ${seen ? 'gone' : 'not recorded yet'}`;
    const shown = [line, ...resources.map((r) => `  ${r}`)].join('\n');
    if (shown !== last) {
      say(shown);
      last = shown;
    }
    if (status.phase !== lastPhase && (status.phase === 'Ready' || status.phase === 'Failed')) {
      if (status.phase === 'Failed') {
        for (const c of status.conditions ?? []) if (c.status !== 'True' || c.type !== 'Ready') say(`  ${c.type}=${c.status} ${c.reason ?? ''}: ${c.message ?? ''}`);
      }
      settled();
    }
    lastPhase = status.phase;
    await Promise.race([stopped, new Promise((resolve) => setTimeout(resolve, 500))]);
  }
}
