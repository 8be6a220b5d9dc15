// `npm run dev`: the whole product on one machine with nothing configured. It starts a local
// Kubernetes control plane (or uses the cluster KUBECONFIG names), the GitHub emulator, installs
// the CRDs, runs the operator in this process, creates a demo repository with a `.preview/`, opens
// a pull request, delivers its signed webhook and shows the environment converging. It stays up
// until Ctrl-C, then tears everything down. It is a test harness (the control plane, the emulator),
// so it lives under test/ and runs from a source checkout; the product never imports it.
// Arguments are the operator's settings: npm run dev -- --controllers=webhook,resync. While it runs
// it takes commands (push, close, reopen, open, approve, unapprove, help) typed in its terminal, or
// from a second terminal: npm run dev -- push.
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { CliIo } from '../../src/cli.js';
import { ConfigError } from '../../src/config.js';
import { environmentName } from '../../src/intake/pull-request-environment-name.js';
import { KubeClient, loadKubeConfig, type KubeAccess } from '../../src/kube/client.js';
import { testCaIssuer } from '../cluster/cert-manager.js';
import { startCluster } from '../cluster/start-cluster.js';
import { installCrds, operatorCrdFiles } from '../fixtures/crds/install-crds.js';
import { demoRepository, lastComment, openDemoPullRequest, startDemoGitHub, type DemoGitHub } from './demo-github.js';
import { devActionNames, devActionsHelp, runDevAction } from './dev-actions.js';
import { devSocketPath, sendDevCommand, startDevControl } from './dev-control.js';
import { removeDemoEnvironments } from './dev-cleanup.js';
import { startDevOperator } from './dev-operator.js';
import { watchEnvironments } from './watch-environment.js';

type Env = Readonly<Record<string, string | undefined>>;
type Undo = () => Promise<unknown>;
const isDemo = (r: { owner: string; name: string }) => r.owner === demoRepository.owner && r.name === demoRepository.name;

/** The cluster KUBECONFIG names (previews over plain HTTP), or a local control plane with cert-manager started for this run. */
async function devCluster(
  env: Env,
  say: (line: string) => void,
  io: CliIo,
  onStop: (step: Undo) => void,
): Promise<{ kubeConfig: KubeAccess; kubeconfigPath: string; tlsIssuer: string }> {
  if (env.KUBECONFIG) {
    const kubeConfig = await loadKubeConfig({ env });
    const context = kubeConfig.getCurrentContext();
    say(`cluster: ${kubeConfig.getCurrentCluster().server} (context ${context}, from KUBECONFIG)`);
    return { kubeConfig, kubeconfigPath: env.KUBECONFIG, tlsIssuer: 'none' };
  }
  say('cluster: starting a local control plane (etcd, kube-apiserver, controller-manager, scheduler, a simulated node, cert-manager)…');
  const cluster = await startCluster({ certManager: true, log: (line) => io.stderr(`  ${line}\n`) });
  onStop(() => cluster.stop());
  say(`cluster: ${cluster.server}`);
  say(`cert-manager: ClusterIssuer ${testCaIssuer} issues the previews' certificates from a test CA`);
  return { kubeConfig: cluster.kubeConfig, kubeconfigPath: cluster.kubeconfigPath, tlsIssuer: testCaIssuer };
}

/** Resolves on the first SIGINT or SIGTERM until `release` removes the handlers. */
function stopSignal(): { stopped: Promise<void>; release: () => void } {
  let stop: () => void = () => {};
  const stopped = new Promise<void>((resolve) => (stop = resolve));
  const onSignal = () => stop();
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  return { stopped, release: () => void process.off('SIGINT', onSignal).off('SIGTERM', onSignal) };
}

/** Takes commands for the demo's pull requests and prints every environment's changes until `stopped`. */
async function driveDemo(
  input: { demo: DemoGitHub; webhookUrl: string; approvalLabel: string; kubeConfig: KubeAccess; env: Env },
  say: (line: string) => void,
  stopped: Promise<void>,
): Promise<void> {
  const { demo, webhookUrl, approvalLabel } = input;
  const control = await startDevControl({
    socketPath: devSocketPath(input.env),
    input: process.stdin.readable ? process.stdin : undefined,
    run: (line) => runDevAction({ demo, webhookUrl, approvalLabel }, line),
    say,
  });
  try {
    say(devActionsHelp());
    if (control.socketPath) say(`(another terminal: npm run dev -- push; it talks to ${control.socketPath})`);
    say('watching the environments converge; Ctrl-C tears everything down.');
    say('');
    const repository = (owner: string, name: string) => owner === demoRepository.owner && name === demoRepository.name;
    await watchEnvironments(new KubeClient(input.kubeConfig), {
      matches: (e) => repository(e.spec.repository.owner, e.spec.repository.name),
      expected: [environmentName(demoRepository, 1)],
      say,
      stopped,
      settled: (e) => lastComment(demo, e.spec.pullRequest.number).forEach((line) => say(line)),
    });
  } finally {
    await control.close();
  }
}

/** Brings everything up, shows the demo converging until a signal, then undoes every step, last first. */
export async function runDev(args: readonly string[], env: Env, io: CliIo): Promise<number> {
  const say = (line: string) => io.stdout(`${line}\n`);
  const undo: Undo[] = [];
  const onStop = (step: Undo) => void undo.push(step);
  const signal = stopSignal();
  try {
    const workDir = await mkdtemp(path.join(os.tmpdir(), 'preview-operator-dev-'));
    onStop(() => rm(workDir, { recursive: true, force: true }));
    const { kubeConfig, kubeconfigPath, tlsIssuer } = await devCluster(env, say, io, onStop);
    // cert-manager's CRDs come with cert-manager (the local control plane runs it).
    await installCrds(kubeConfig, operatorCrdFiles);
    say('CRDs: PreviewEnvironment, Algorithm, Database installed');
    const demo = await startDemoGitHub(onStop);
    say(`GitHub emulator: ${demo.gh.url} (App ${demo.app.slug} installed on ${demoRepository.owner}/${demoRepository.name})`);
    const started = await startDevOperator({ args, env, workDir, kubeConfig, demo, tlsIssuer });
    const { operator, controllers, logFile, secretFile, approvalLabel } = started;
    onStop(() => operator.stop());
    // A cluster dev did not start keeps nothing of the demo: removed while the operator still runs (its finalizer).
    if (env.KUBECONFIG) {
      onStop(() => removeDemoEnvironments(new KubeClient(kubeConfig), { matches: isDemo, say }));
    }
    say(`operator: running ${controllers.join(', ')}; its JSON log: ${logFile}`);
    say('');
    say(`export KUBECONFIG=${kubeconfigPath}`);
    say(`webhook: ${operator.webhookUrl}`);
    say(`metrics: ${operator.metricsUrl}`);
    if (operator.dashboardUrl) say(`dashboard: ${operator.dashboardUrl}`);
    say(`webhook secret (to sign your own deliveries): ${secretFile}`);
    say('');
    say(await openDemoPullRequest(demo, operator.webhookUrl));
    await driveDemo({ demo, webhookUrl: operator.webhookUrl, approvalLabel, kubeConfig, env }, say, signal.stopped);
    say('stopping…');
    return 0;
  } catch (err) {
    io.stderr(err instanceof ConfigError ? `${err.message}\n` : `npm run dev: ${(err as Error).message}\n`);
    return err instanceof ConfigError ? 2 : 1;
  } finally {
    signal.release();
    for (const step of undo.reverse()) await step().catch((err: Error) => io.stderr(`teardown: ${err.message}\n`));
  }
}

const io: CliIo = { stdout: (text) => void process.stdout.write(text), stderr: (text) => void process.stderr.write(text) };
const args = process.argv.slice(2);
// `npm run dev -- push`: a command for the dev running in another terminal, not a new one.
const code =
  args[0] && devActionNames.includes(args[0])
    ? await sendDevCommand(devSocketPath(process.env), args.join(' '), io)
    : await runDev(args, process.env, io);
// Informer watches and keep-alive sockets would hold the event loop open after a stop.
process.exit(code);
