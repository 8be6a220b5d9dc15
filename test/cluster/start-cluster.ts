import { spawn, type ChildProcess } from 'node:child_process';
import { generateKeyPairSync, randomBytes } from 'node:crypto';
import { createWriteStream, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { request } from 'node:https';
import { createServer, type Socket } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { KubeConfig } from '@kubernetes/client-node';
import { AuditLog, auditPolicyYaml } from './audit-log.js';
import { ensureBinary } from './binary.js';
import { ensureCertManagerBinary } from './cert-manager-binary.js';
import { certManagerArgs, createTestCa, installCertManagerCrds } from './cert-manager.js';

export interface StartClusterOptions {
  /** Simulated nodes (default 1). */
  nodes?: number;
  /** Progress lines (build and start-up). Default: stderr. */
  log?: (line: string) => void;
  /** Parent folder of the temporary data folder (default: the OS temp dir). */
  tmpDir?: string;
  /**
   * Whether the running components keep this process alive (default true). With false they
   * are killed, and the data folder removed, when the process exits: for a test file run on
   * its own, whose cluster must outlive every test and hook of the file and no hook can stop it
   * last (see test/support/test-cluster.ts).
   */
  keepsProcessAlive?: boolean;
  /**
   * Also run cert-manager (its real CRDs and controllers, built from its Go module) with a test
   * CA behind the ClusterIssuer `preview-issuer`, Ready before this resolves (default false).
   */
  certManager?: boolean;
}

/** What a running cluster looks like from the outside; serialisable, so test files can attach to one cluster. */
export interface ClusterHandle {
  server: string;
  token: string;
  kubeconfigPath: string;
  auditLogPath: string;
  dataDir: string;
}

export interface Cluster extends ClusterHandle {
  kubeConfig: KubeConfig;
  audit: AuditLog;
  /** Stops the API server alone and starts it again on the same port and etcd (for watch-recovery tests). */
  restartApiServer(): Promise<void>;
  /** The process ids of the running components. */
  pids(): Record<string, number>;
  /** Stops every component and removes the data folder. Safe to call twice. */
  stop(): Promise<void>;
}

type Component = 'etcd' | 'apiserver' | 'controller-manager' | 'scheduler' | 'node-sim' | 'cert-manager';

const controllers = [
  'namespace-controller',
  'garbage-collector-controller',
  'deployment-controller',
  'replicaset-controller',
  'statefulset-controller',
  'serviceaccount-controller',
  'serviceaccount-token-controller',
  'root-ca-certificate-publisher-controller',
  'clusterrole-aggregation-controller',
  'endpoints-controller',
  'endpointslice-controller',
  'endpointslice-mirroring-controller',
  'job-controller',
  'cronjob-controller',
  'daemonset-controller',
  'disruption-controller',
  'pod-garbage-collector-controller',
  'resourcequota-controller',
  'ttl-after-finished-controller',
  'persistentvolume-binder-controller',
  'persistentvolumeclaim-protection-controller',
  'persistentvolume-protection-controller',
  'replicationcontroller-controller',
  'ephemeral-volume-controller',
];

/** Every component ever started by this process, so an exiting process can kill them synchronously. */
const live = new Set<ChildProcess>();
/** Data folders of clusters that end with the process (`keepsProcessAlive: false`). */
const removedAtExit = new Set<string>();
process.on('exit', () => {
  for (const child of live) child.kill('SIGKILL');
  for (const dir of removedAtExit) rmSync(dir, { recursive: true, force: true, maxRetries: 3 });
});

export function kubeconfigYaml(server: string, caFile: string, token: string, user = 'admin'): string {
  return `apiVersion: v1
kind: Config
clusters:
- name: kube-local
  cluster:
    server: ${server}
    certificate-authority: ${caFile}
users:
- name: ${user}
  user:
    token: ${token}
contexts:
- name: kube-local
  context:
    cluster: kube-local
    user: ${user}
current-context: kube-local
`;
}

/** Attaches to a cluster another process started (see `ClusterHandle`). */
export function attachCluster(handle: ClusterHandle): Pick<Cluster, 'kubeConfig' | 'audit'> & ClusterHandle {
  const kubeConfig = new KubeConfig();
  kubeConfig.loadFromFile(handle.kubeconfigPath);
  return { ...handle, kubeConfig, audit: new AuditLog(handle.auditLogPath) };
}

/**
 * The Go runtime's garbage collector for every component: collect at 4× the live heap instead
 * of 2×, under a soft limit per process. The whole control plane shares the machine's cores
 * with the operator and the tests; GC was 11 % of the API server's CPU in the bench's burst,
 * and memory is what this machine has plenty of. GOGC and GOMEMLIMIT in the environment win.
 */
const goRuntimeEnv = { GOGC: process.env.GOGC ?? '400', GOMEMLIMIT: process.env.GOMEMLIMIT ?? '2GiB' };

export async function startCluster(options: StartClusterOptions = {}): Promise<Cluster> {
  const log = options.log ?? ((line: string) => process.stderr.write(`${line}\n`));
  // Both builds at once: a cold build is mostly waiting on the compiler, which `go` parallelises.
  const [binary, certManagerBinary] = await Promise.all([
    ensureBinary({ log }),
    options.certManager ? ensureCertManagerBinary({ log }) : undefined,
  ]);
  const started = Date.now();
  const dataDir = mkdtempSync(path.join(options.tmpDir ?? os.tmpdir(), 'kube-local-'));
  const keepsProcessAlive = options.keepsProcessAlive ?? true;
  if (!keepsProcessAlive) removedAtExit.add(dataDir);
  const pki = path.join(dataDir, 'pki');
  const logs = path.join(dataDir, 'logs');
  mkdirSync(pki, { recursive: true });
  mkdirSync(logs, { recursive: true });

  const [etcdPort, etcdPeerPort, apiPort, schedulerPort] = await freePorts(4);
  const server = `https://127.0.0.1:${apiPort}`;
  const caFile = path.join(pki, 'apiserver.crt');

  // One RSA key signs and verifies ServiceAccount tokens.
  const saKey = path.join(pki, 'sa.key');
  const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  writeFileSync(saKey, privateKey.export({ type: 'pkcs1', format: 'pem' }), { mode: 0o600 });

  // Static tokens: one identity per component, so the audit log tells them apart.
  const tokens: Record<string, string> = {};
  const identities = ['admin', 'system:kube-controller-manager', 'system:kube-scheduler', 'system:node-sim', 'system:cert-manager'];
  const tokenFile = path.join(pki, 'tokens.csv');
  writeFileSync(
    tokenFile,
    identities
      .map((user, i) => {
        tokens[user] = randomBytes(24).toString('hex');
        return `${tokens[user]},${user},uid-${i},"system:masters"`;
      })
      .join('\n') + '\n',
    { mode: 0o600 },
  );
  const kubeconfigFor = (user: string) => {
    const file = path.join(dataDir, `${user.replace(/[^a-z0-9]+/g, '-')}.kubeconfig`);
    writeFileSync(file, kubeconfigYaml(server, caFile, tokens[user]!, user), { mode: 0o600 });
    return file;
  };
  const auditLogPath = path.join(dataDir, 'audit.log');
  const auditPolicy = path.join(dataDir, 'audit-policy.yaml');
  writeFileSync(auditPolicy, auditPolicyYaml);

  const procs = new Map<Component, ChildProcess>();
  const exited = new Map<Component, string>();
  /** Starts a component: a kube-local subcommand, or `executable` with `args` alone. */
  const run = (component: Component, args: string[], executable?: string) => {
    const out = createWriteStream(path.join(logs, `${component}.log`), { flags: 'a' });
    const child = spawn(executable ?? binary, executable ? args : [component, ...args], {
      env: {
        PATH: process.env.PATH ?? '/usr/bin:/bin',
        HOME: process.env.HOME ?? dataDir,
        KUBE_LOCAL_EXIT_WITH_PARENT: '1',
        ...goRuntimeEnv,
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    child.stdout!.pipe(out);
    child.stderr!.pipe(out);
    if (!keepsProcessAlive) {
      child.unref();
      // Pipes from a child are sockets: unreferenced, they no longer hold the event loop open.
      (child.stdout as Socket).unref();
      (child.stderr as Socket).unref();
    }
    live.add(child);
    exited.delete(component);
    child.on('exit', (code, signal) => {
      live.delete(child);
      exited.set(component, `${component} exited (code ${code}, signal ${signal}); see ${path.join(logs, `${component}.log`)}`);
    });
    procs.set(component, child);
  };
  const failIfExited = (component: Component) => {
    const why = exited.get(component);
    if (why) throw new Error(`${why}\n${tail(path.join(logs, `${component}.log`))}`);
  };

  const apiserverArgs = [
    `--etcd-servers=http://127.0.0.1:${etcdPort}`,
    '--bind-address=127.0.0.1',
    '--advertise-address=127.0.0.1',
    `--secure-port=${apiPort}`,
    `--cert-dir=${pki}`,
    '--service-cluster-ip-range=10.96.0.0/16',
    '--service-account-issuer=https://kubernetes.default.svc.cluster.local',
    `--service-account-key-file=${saKey}`,
    `--service-account-signing-key-file=${saKey}`,
    '--authorization-mode=RBAC',
    `--token-auth-file=${tokenFile}`,
    '--endpoint-reconciler-type=none',
    '--allow-privileged=true',
    '--profiling=true',
    `--audit-log-path=${auditLogPath}`,
    `--audit-policy-file=${auditPolicy}`,
    '--audit-log-format=json',
    '--audit-log-mode=blocking',
    '--audit-log-maxsize=0',
    '--v=1',
  ];

  const kubeconfigPath = kubeconfigFor('admin');
  const kubeConfig = new KubeConfig();
  kubeConfig.loadFromFile(kubeconfigPath);

  /** cert-manager's CRDs, then its controllers, then the test CA (Ready once they run). */
  const startCertManager = async (executable: string) => {
    await installCertManagerCrds(kubeConfig);
    run('cert-manager', certManagerArgs(kubeconfigFor('system:cert-manager')), executable);
    await createTestCa(kubeConfig, () => failIfExited('cert-manager'));
  };

  const stop = async () => {
    const order: Component[] = ['cert-manager', 'node-sim', 'scheduler', 'controller-manager', 'apiserver', 'etcd'];
    for (const component of order) await terminate(procs.get(component));
    procs.clear();
    rmSync(dataDir, { recursive: true, force: true });
    removedAtExit.delete(dataDir);
  };

  try {
    run('etcd', [`--data-dir=${path.join(dataDir, 'etcd')}`, `--client-port=${etcdPort}`, `--peer-port=${etcdPeerPort}`]);
    await waitFor('etcd', 60_000, async () => {
      failIfExited('etcd');
      return (await httpGet(`http://127.0.0.1:${etcdPort}/health`)).status === 200;
    });

    run('apiserver', apiserverArgs);
    const readyz = async () => {
      failIfExited('apiserver');
      const res = await apiGet(server, '/readyz', tokens.admin!).catch(() => undefined);
      return res?.status === 200;
    };
    await waitFor('kube-apiserver /readyz', 120_000, readyz);

    const cmKubeconfig = kubeconfigFor('system:kube-controller-manager');
    run('controller-manager', [
      `--kubeconfig=${cmKubeconfig}`,
      `--authentication-kubeconfig=${cmKubeconfig}`,
      `--authorization-kubeconfig=${cmKubeconfig}`,
      '--leader-elect=false',
      `--controllers=${controllers.join(',')}`,
      `--service-account-private-key-file=${saKey}`,
      `--root-ca-file=${caFile}`,
      '--secure-port=0',
      '--concurrent-deployment-syncs=10',
      '--concurrent-statefulset-syncs=10',
      '--concurrent-replicaset-syncs=10',
      '--concurrent-namespace-syncs=10',
      '--concurrent-gc-syncs=20',
      '--kube-api-qps=200',
      '--kube-api-burst=400',
      '--v=1',
    ]);
    const schedKubeconfig = kubeconfigFor('system:kube-scheduler');
    run('scheduler', [
      `--kubeconfig=${schedKubeconfig}`,
      `--authentication-kubeconfig=${schedKubeconfig}`,
      `--authorization-kubeconfig=${schedKubeconfig}`,
      '--leader-elect=false',
      '--bind-address=127.0.0.1',
      `--secure-port=${schedulerPort}`,
      '--kube-api-qps=200',
      '--kube-api-burst=400',
      '--v=1',
    ]);
    run('node-sim', [`--kubeconfig=${kubeconfigFor('system:node-sim')}`, `--nodes=${options.nodes ?? 1}`]);

    await waitFor('a Ready node and ServiceAccount default/default', 120_000, async () => {
      for (const c of ['controller-manager', 'scheduler', 'node-sim'] as const) failIfExited(c);
      const nodes = await apiGet(server, '/api/v1/nodes', tokens.admin!);
      const ready = nodes.status === 200 && (JSON.parse(nodes.body).items as NodeLike[]).some(isReady);
      if (!ready) return false;
      return (await apiGet(server, '/api/v1/namespaces/default/serviceaccounts/default', tokens.admin!)).status === 200;
    });
    if (certManagerBinary) await startCertManager(certManagerBinary);
  } catch (err) {
    await stop();
    throw err;
  }

  const withCertManager = certManagerBinary ? ', with cert-manager' : '';
  log(`kube-local: cluster ready at ${server} in ${((Date.now() - started) / 1000).toFixed(1)}s${withCertManager}`);

  return {
    server,
    token: tokens.admin!,
    kubeconfigPath,
    auditLogPath,
    dataDir,
    kubeConfig,
    audit: new AuditLog(auditLogPath),
    async restartApiServer() {
      await terminate(procs.get('apiserver'));
      run('apiserver', apiserverArgs);
      await waitFor('kube-apiserver /readyz after restart', 120_000, async () => {
        failIfExited('apiserver');
        const res = await apiGet(server, '/readyz', tokens.admin!).catch(() => undefined);
        return res?.status === 200;
      });
    },
    pids() {
      const out: Record<string, number> = {};
      for (const [component, child] of procs) {
        if (child.pid && child.exitCode === null && child.signalCode === null) out[component] = child.pid;
      }
      return out;
    },
    stop,
  };
}

interface NodeLike {
  status?: { conditions?: { type: string; status: string }[] };
  spec?: { taints?: { key: string }[] };
}

function isReady(node: NodeLike): boolean {
  const ready = node.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') ?? false;
  const tainted = node.spec?.taints?.some((t) => t.key === 'node.kubernetes.io/not-ready') ?? false;
  return ready && !tainted;
}

async function terminate(child: ChildProcess | undefined): Promise<void> {
  if (!child || child.exitCode !== null || child.signalCode !== null) return;
  const gone = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
  await gone;
  clearTimeout(timer);
}

async function freePorts(count: number): Promise<number[]> {
  const servers = await Promise.all(
    Array.from(
      { length: count },
      () =>
        new Promise<import('node:net').Server>((resolve, reject) => {
          const srv = createServer();
          srv.once('error', reject);
          srv.listen(0, '127.0.0.1', () => resolve(srv));
        }),
    ),
  );
  const ports = servers.map((s) => (s.address() as import('node:net').AddressInfo).port);
  await Promise.all(servers.map((s) => new Promise((r) => s.close(r))));
  return ports;
}

async function waitFor(what: string, timeoutMs: number, check: () => Promise<boolean>): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let lastError: unknown;
  while (Date.now() < deadline) {
    try {
      if (await check()) return;
    } catch (err) {
      if (err instanceof Error && /exited \(code/.test(err.message)) throw err;
      lastError = err;
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`kube-local: timed out after ${timeoutMs / 1000}s waiting for ${what}${lastError ? `: ${String(lastError)}` : ''}`);
}

async function httpGet(url: string): Promise<{ status: number; body: string }> {
  const res = await fetch(url).catch(() => undefined);
  return res ? { status: res.status, body: await res.text() } : { status: 0, body: '' };
}

/** A GET against the API server during start-up, before its CA file can be trusted to exist. */
function apiGet(server: string, pathname: string, token: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request(
      `${server}${pathname}`,
      { headers: { authorization: `Bearer ${token}` }, rejectUnauthorized: false, timeout: 5000 },
      (res) => {
        let body = '';
        res.on('data', (d) => (body += d));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
      },
    );
    req.on('error', reject);
    req.on('timeout', () => req.destroy(new Error('timeout')));
    req.end();
  });
}

function tail(file: string, lines = 30): string {
  try {
    return readFileSync(file, 'utf8').trimEnd().split('\n').slice(-lines).join('\n');
  } catch {
    return '';
  }
}
