// client-go credential plugins (`users[].user.exec`): a command that prints an ExecCredential
// holding a bearer token or a client certificate (aws eks get-token, gke-gcloud-auth-plugin,
// kubelogin, …). As in client-go, the answer is kept until its expirationTimestamp, or until
// the API server rejects it, and then the plugin runs again; concurrent requests share one run.
import { spawn } from 'node:child_process';
import { createSecureContext } from 'node:tls';
import { parse } from 'yaml';
import { KubeConfigError } from './kube-config-error.js';

/** The versions client-go still speaks (v1alpha1 was removed in Kubernetes 1.24). */
export const execApiVersions = ['client.authentication.k8s.io/v1', 'client.authentication.k8s.io/v1beta1'] as const;
export type ExecApiVersion = (typeof execApiVersions)[number];

export interface ExecPluginConfig {
  command: string;
  args: string[];
  env: { name: string; value: string }[];
  apiVersion: ExecApiVersion;
  /** Shown when the command is not installed. */
  installHint?: string;
}

/** The cluster as the plugin sees it in `KUBERNETES_EXEC_INFO` (`spec.cluster`), when the kubeconfig sets provideClusterInfo. */
export interface ExecClusterInfo {
  server: string;
  'tls-server-name'?: string;
  'insecure-skip-tls-verify'?: boolean;
  /** Base64 of the CA bundle, read from the file or the data. */
  'certificate-authority-data'?: string;
  'proxy-url'?: string;
  'disable-compression'?: boolean;
  /** The cluster's `client.authentication.k8s.io/exec` extension. */
  config?: unknown;
}

/** What a plugin run produced. */
export interface ExecCredential {
  token?: string;
  /** PEM. */
  clientCertificateData?: string;
  clientKeyData?: string;
  /** Epoch milliseconds from which the plugin is run again; absent: kept until the API server rejects it. */
  expiresAt?: number;
}

export interface ExecCredentialPluginOptions {
  /** The kubeconfig user, for messages. */
  user: string;
  /** The environment the plugin inherits (the config's `env` entries are added to it). */
  env: Readonly<Record<string, string | undefined>>;
  /** The cluster to describe to the plugin; absent unless the kubeconfig sets provideClusterInfo. */
  cluster?: () => Promise<ExecClusterInfo>;
  /** A plugin that has not answered by then is killed, so a hung plugin cannot stall every API call. */
  timeoutMs: number;
  now?: () => number;
}

/** What is kept of a plugin's stderr for an error message. */
const stderrTailChars = 2_000;
/** No credential is this large; a plugin printing more is broken. */
const maxStdoutBytes = 1024 * 1024;

export class ExecCredentialPlugin {
  private current: ExecCredential | undefined;
  private running: Promise<ExecCredential> | undefined;
  private readonly now: () => number;

  constructor(readonly config: ExecPluginConfig, private readonly options: ExecCredentialPluginOptions) {
    this.now = options.now ?? Date.now;
  }

  /** The current credential: the kept one while it has not expired, else the answer of a new run. */
  credential(): Promise<ExecCredential> {
    const current = this.current;
    if (current && (current.expiresAt === undefined || this.now() < current.expiresAt)) return Promise.resolve(current);
    this.running ??= this.run()
      .then((credential) => (this.current = credential))
      .finally(() => (this.running = undefined));
    return this.running;
  }

  /** The API server refused `credential`: unless a newer one replaced it already, the next request runs the plugin again. */
  rejected(credential: ExecCredential): void {
    if (this.current === credential) this.current = undefined;
  }

  private async run(): Promise<ExecCredential> {
    const { command, args, apiVersion } = this.config;
    const label = `exec plugin of user "${this.options.user}" (${command})`;
    // The operator never gives a plugin a terminal: it must not prompt.
    const spec: Record<string, unknown> = { interactive: false };
    if (this.options.cluster) spec.cluster = await this.options.cluster();
    const env: Record<string, string> = {};
    for (const [k, v] of Object.entries(this.options.env)) if (v !== undefined) env[k] = v;
    for (const { name, value } of this.config.env) env[name] = value;
    env.KUBERNETES_EXEC_INFO = JSON.stringify({ apiVersion, kind: 'ExecCredential', spec });

    const result = await runCommand(command, args, env, this.options.timeoutMs);
    const stderr = tail(result.stderr);
    if (result.spawnError) {
      const code = result.spawnError.code;
      if (code === 'ENOENT') {
        throw new KubeConfigError(`${label}: command not found${this.config.installHint ? `\n${this.config.installHint.trim()}` : ''}`);
      }
      throw new KubeConfigError(`${label}: cannot run it: ${result.spawnError.message}`, { cause: result.spawnError });
    }
    // A slow or failing plugin (the cloud's token service throttling, a network blip) may succeed next time.
    if (result.timedOut) throw new KubeConfigError(`${label}: no answer within ${this.options.timeoutMs} ms; stderr: ${stderr}`, { transient: true });
    if (result.tooLarge) throw new KubeConfigError(`${label}: printed more than ${maxStdoutBytes} bytes; stderr: ${stderr}`);
    if (result.exitCode !== 0) {
      const how = result.exitCode === null ? `was killed by ${result.signal}` : `failed with exit code ${result.exitCode}`;
      throw new KubeConfigError(`${label} ${how}; stderr: ${stderr}`, { transient: true });
    }
    try {
      return parseExecCredential(result.stdout, apiVersion);
    } catch (err) {
      throw new KubeConfigError(`${label} printed no usable ExecCredential: ${(err as Error).message}; stderr: ${stderr}`, { cause: err });
    }
  }
}

/** The credential in a plugin's standard output (JSON, or YAML as client-go's decoder also takes). */
function parseExecCredential(stdout: string, apiVersion: ExecApiVersion): ExecCredential {
  let doc: unknown;
  try {
    doc = parse(stdout);
  } catch (err) {
    throw new Error(`not JSON: ${(err as Error).message.split('\n')[0]}`);
  }
  if (!doc || typeof doc !== 'object') throw new Error(`not an object: ${JSON.stringify(stdout.slice(0, 200))}`);
  const cred = doc as { apiVersion?: unknown; kind?: unknown; status?: Record<string, unknown> };
  if (cred.kind !== 'ExecCredential') throw new Error(`kind is ${JSON.stringify(cred.kind)}, not "ExecCredential"`);
  if (cred.apiVersion !== apiVersion) {
    throw new Error(`the kubeconfig asks for ${apiVersion}, the plugin answered ${JSON.stringify(cred.apiVersion)}`);
  }
  const status = cred.status;
  if (!status || typeof status !== 'object') throw new Error('it has no status');
  const text = (key: string): string | undefined => {
    const v = status[key];
    if (v === undefined || v === null || v === '') return undefined;
    if (typeof v !== 'string') throw new Error(`status.${key} must be a string`);
    return v;
  };
  const token = text('token');
  const clientCertificateData = text('clientCertificateData');
  const clientKeyData = text('clientKeyData');
  if (!token && !clientCertificateData && !clientKeyData) throw new Error('status has neither a token nor a client certificate and key');
  if (!clientCertificateData !== !clientKeyData) throw new Error('status has a client certificate or a key, not both');
  const pairProblem = clientCertificateData && clientKeyData ? keyPairProblem(clientCertificateData, clientKeyData) : undefined;
  if (pairProblem) throw new Error(`its ${pairProblem}`);
  let expiresAt: number | undefined;
  const expiration = text('expirationTimestamp');
  if (expiration !== undefined) {
    expiresAt = Date.parse(expiration);
    if (!/^\d{4}-\d\d-\d\dT/.test(expiration) || Number.isNaN(expiresAt)) {
      throw new Error(`status.expirationTimestamp "${expiration}" is not an RFC 3339 time`);
    }
  }
  return { token, clientCertificateData, clientKeyData, expiresAt };
}

/** Why a client certificate and key cannot be used together (TLS refuses them), or undefined when they can. */
export function keyPairProblem(cert: string | Buffer, key: string | Buffer): string | undefined {
  try {
    createSecureContext({ cert, key });
    return undefined;
  } catch (err) {
    return `client certificate and key are not a usable pair: ${(err as Error).message}`;
  }
}

interface CommandResult {
  stdout: string;
  stderr: string;
  exitCode: number | null;
  signal: NodeJS.Signals | null;
  spawnError?: NodeJS.ErrnoException;
  timedOut: boolean;
  tooLarge: boolean;
}

/** How long after the plugin exits its output may still arrive (from a grandchild) before the pipes are closed. */
const exitGraceMs = 2000;

/** Runs the plugin with no stdin, collecting its output; kills it after `timeoutMs`. */
function runCommand(command: string, args: readonly string[], env: Record<string, string>, timeoutMs: number): Promise<CommandResult> {
  return new Promise((resolve) => {
    // Its own process group, so a kill reaches the processes it started too (a shell around aws or gcloud).
    const child = spawn(command, args, { env, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    let outBytes = 0;
    let timedOut = false;
    let tooLarge = false;
    let spawnError: NodeJS.ErrnoException | undefined;
    // The whole group goes; and should anything still hold the pipes, our ends close too, or
    // 'close' would never come and every request would wait.
    const kill = () => {
      try {
        process.kill(-child.pid!, 'SIGKILL');
      } catch {
        child.kill('SIGKILL'); // not started, or the group is already gone
      }
      child.stdout.destroy();
      child.stderr.destroy();
    };
    const timer = setTimeout(() => {
      timedOut = true;
      kill();
    }, timeoutMs);
    child.stdout.on('data', (chunk: Buffer) => {
      outBytes += chunk.length;
      if (outBytes > maxStdoutBytes) {
        tooLarge = true;
        kill();
      } else {
        out.push(chunk);
      }
    });
    child.stderr.on('data', (chunk: Buffer) => {
      err.push(chunk);
      // Only the tail is ever shown: keep memory bounded for a chatty plugin.
      if (err.length > 64) err.splice(0, err.length - 32);
    });
    child.once('error', (e) => (spawnError = e));
    // Exited, but a grandchild still holds the pipes: what it wrote by now is the answer.
    let exitGrace: NodeJS.Timeout | undefined;
    child.once('exit', () => {
      exitGrace = setTimeout(() => {
        child.stdout.destroy();
        child.stderr.destroy();
      }, exitGraceMs);
    });
    // 'close' comes after 'exit' and after the pipes are drained, and also after a spawn error.
    child.once('close', (exitCode, signal) => {
      clearTimeout(timer);
      clearTimeout(exitGrace);
      resolve({
        stdout: Buffer.concat(out).toString('utf8'), stderr: Buffer.concat(err).toString('utf8'),
        exitCode, signal, spawnError, timedOut, tooLarge,
      });
    });
  });
}

function tail(stderr: string): string {
  const trimmed = stderr.trim();
  if (!trimmed) return '(empty)';
  return trimmed.length > stderrTailChars ? `…${trimmed.slice(-stderrTailChars)}` : trimmed;
}
