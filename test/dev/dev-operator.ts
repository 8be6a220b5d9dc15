// The operator of `npm run dev`, in this process and configured like a real one: the defaults
// below point it at the emulator and the demo; flags and environment variables still win.
import { createWriteStream } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { startOperator, type RunningOperator } from '../../src/cli-run.js';
import { loadConfig } from '../../src/config.js';
import type { KubeAccess } from '../../src/kube/client.js';
import { createLogger } from '../../src/logger.js';
import { effectivePolicy } from '../../src/policy/policy-config.js';
import { demoRepository, type DemoGitHub } from './demo-github.js';

/** What `dev` sets unless a flag or variable says otherwise; `tlsIssuer` is the ClusterIssuer of previews, or `none`. */
export function embeddedDefaults(
  ghUrl: string,
  appId: number,
  keyFile: string,
  secretFile: string,
  tlsIssuer: string,
): Record<string, string> {
  return {
    controllers: 'algorithm,database,preview-environment,webhook',
    'leader-elect': 'false',
    'webhook-host': '127.0.0.1',
    'webhook-port': '0',
    'metrics-port': '0',
    'dashboard-port': '0',
    'webhook-secret-file': secretFile,
    'github-api-url': ghUrl,
    'github-app-id': String(appId),
    'github-app-private-key-file': keyFile,
    // The demo repository is on disk: the emulator serves its `.preview/` over the API, and git
    // checks it out from there (file://) to run its `.preview/main.ts`.
    'git-allowed-protocols': 'https,file',
    'preview-domain': 'preview.localhost',
    // The local control plane's cert-manager issues from its test CA; another cluster's issuers are unknown.
    'tls-issuer': tlsIssuer,
    'log-level': 'info',
  };
}

export interface DevOperatorInput {
  args: readonly string[];
  env: Readonly<Record<string, string | undefined>>;
  workDir: string;
  kubeConfig: KubeAccess;
  demo: DemoGitHub;
  /** The ClusterIssuer of the previews' certificates, or `none` (plain HTTP). */
  tlsIssuer: string;
}

export interface DevOperator {
  operator: RunningOperator;
  controllers: readonly string[];
  logFile: string;
  secretFile: string;
  /** The label that approves an untrusted pull request of the demo repository. */
  approvalLabel: string;
}

/** Writes the App key and webhook secret to `workDir` and starts the operator; a bad setting throws ConfigError. */
export async function startDevOperator({ args, env, workDir, kubeConfig, demo, tlsIssuer }: DevOperatorInput): Promise<DevOperator> {
  const keyFile = path.join(workDir, 'app-key.pem');
  const secretFile = path.join(workDir, 'webhook-secret');
  await writeFile(keyFile, demo.app.privateKey, { mode: 0o600 });
  await writeFile(secretFile, demo.webhookSecret, { mode: 0o600 });
  const defaults = embeddedDefaults(demo.gh.url, demo.app.id, keyFile, secretFile, tlsIssuer);
  // The cluster is already chosen (and may be the local one): KUBECONFIG does not reach the config.
  const config = loadConfig({ args, env: { ...env, KUBECONFIG: undefined }, purpose: 'run', defaults });
  const logFile = path.join(workDir, 'operator.log');
  const logger = createLogger({ level: config.logLevel, destination: createWriteStream(logFile) });
  const operator = await startOperator(config, { logger, kubeConfig, cloneUrl: () => demo.repo.cloneUrl });
  const { approvalLabel } = effectivePolicy(config.policy, demoRepository).trust;
  return { operator, controllers: config.controllers, logFile, secretFile, approvalLabel };
}
