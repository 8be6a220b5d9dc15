// The settings of the GitHub side: the webhook server and its secrets, GitHub credentials (an
// App or a token, never both), the policy file with the budget flags, and the resync.
import { createPrivateKey } from 'node:crypto';
import { parse as parseYaml } from 'yaml';
import type { GitHubAuth } from './github/octokit-factory.js';
import { ttlProblem } from './policy/budgets.js';
import type { PolicyConfig } from './policy/policy-config.js';
import { resolvePolicyConfig, validatePolicyConfig } from './policy/policy-validation.js';
import type { OperatorConfig } from './config.js';
import type { ControllerNeeds } from './config-process.js';
import type { SettingReader } from './config-reader.js';

export function webhookSettings(read: SettingReader, needs: ControllerNeeds): OperatorConfig['webhook'] {
  const port = read.int('webhook-port', 0, 65535);
  const path = read.str('webhook-path')!;
  if (!/^\/[A-Za-z0-9._~!$&'()*+,;=:@%/-]*$/.test(path)) read.problem('webhook-path', `"${path}" must be a URL path starting with /`);
  if (['/healthz', '/readyz', '/metrics'].includes(path)) read.problem('webhook-path', `${path} is taken by the operator itself`);
  const maxBodyBytes = read.int('webhook-max-body-bytes', 1024, 25 * 1024 * 1024);
  const maxBodyBytesInFlight = read.int('webhook-max-body-bytes-in-flight', 1024);
  if (maxBodyBytes !== undefined && maxBodyBytesInFlight !== undefined && maxBodyBytesInFlight < maxBodyBytes) {
    read.problem(
      'webhook-max-body-bytes-in-flight',
      `${maxBodyBytesInFlight} is less than --webhook-max-body-bytes: no delivery that large could be read`,
    );
  }
  const dedupeWindowMs = read.duration('webhook-dedupe-window', 1000);
  const secrets = webhookSecrets(read, needs.webhookSecret);
  const host = read.str('webhook-host')!;
  return {
    host,
    port: port!,
    path,
    secrets,
    maxBodyBytes: maxBodyBytes!,
    maxBodyBytesInFlight: maxBodyBytesInFlight!,
    dedupeWindowMs: dedupeWindowMs!,
  };
}

/** Inline (comma-separated) or from a file (one per line): several during a rotation. */
function webhookSecrets(read: SettingReader, required: boolean): string[] {
  const inline = read.raw('webhook-secret');
  const file = read.file('webhook-secret-file');
  const fileSet = read.has('webhook-secret-file');
  let secrets: string[] = [];
  if (inline && fileSet) read.problem('webhook-secret', 'give either --webhook-secret or --webhook-secret-file, not both');
  else if (inline)
    secrets = inline.value
      .split(',')
      .map((s) => s.trim())
      .filter(Boolean);
  else if (file !== undefined) {
    secrets = file
      .split(/\r?\n/)
      .map((s) => s.trim())
      .filter(Boolean);
    if (secrets.length === 0) read.problem('webhook-secret-file', 'the file is empty');
  }
  if (required && !inline && !fileSet) {
    read.problem(
      'webhook-secret',
      'required by the webhook controller: set --webhook-secret-file (or --webhook-secret); ' +
        'without it forged deliveries could not be told apart',
    );
  }
  return secrets;
}

export function gitHubSettings(read: SettingReader, needs: ControllerNeeds): OperatorConfig['github'] {
  const baseUrl = read.url('github-api-url');
  const auth = gitHubAuth(read, needs);
  const throttle = read.bool('github-throttle');
  const maxRetryAfterMs = read.duration('github-max-retry-after', 1000);
  return { baseUrl: baseUrl!, ...(auth ? { auth } : {}), throttle: throttle!, maxRetryAfterSeconds: maxRetryAfterMs! / 1000 };
}

function gitHubAuth(read: SettingReader, needs: ControllerNeeds): GitHubAuth | undefined {
  const app = appSettings(read);
  const token = tokenSettings(read);
  if (app.given && token.given) {
    read.problem('github-token', 'give either a GitHub App (--github-app-id, --github-app-private-key-file) or a token, not both');
    return undefined;
  }
  if (app.given) return app.auth();
  if (token.given) return token.auth();
  if (needs.gitHub.length > 0) {
    read.problem(
      'github-app-id',
      `required by the ${needs.gitHub.join(', ')} controller(s): ` +
        'a GitHub App (--github-app-id and --github-app-private-key-file) or a token (--github-token-file)',
    );
  }
  return undefined;
}

interface AuthSettings {
  /** Any of its settings is given. */
  given: boolean;
  /** The credentials, once it is known the other kind is not given; undefined with an issue when incomplete. */
  auth(): GitHubAuth | undefined;
}

function appSettings(read: SettingReader): AuthSettings {
  const appId = read.str('github-app-id');
  const installationId = read.int('github-app-installation-id', 1);
  const keyFileSet = read.has('github-app-private-key-file');
  const privateKey = read.file('github-app-private-key-file');
  const numericId = appId !== undefined && /^\d+$/.test(appId);
  if (appId !== undefined && !numericId) {
    read.problem('github-app-id', `${read.raw('github-app-id')!.source}: must be the App's numeric id`);
  }
  if (privateKey !== undefined) {
    try {
      createPrivateKey(privateKey);
    } catch (err) {
      const reason = `not a PEM private key (${(err as Error).message}); download one from the App's settings page`;
      read.problem('github-app-private-key-file', reason);
    }
  }
  const auth = (): GitHubAuth | undefined => {
    if (appId === undefined) read.problem('github-app-id', 'required with --github-app-private-key-file');
    if (!keyFileSet) read.problem('github-app-private-key-file', 'required with --github-app-id');
    if (!numericId || privateKey === undefined) return undefined;
    return { type: 'app', appId: Number(appId), privateKey, ...(installationId !== undefined ? { installationId } : {}) };
  };
  return { given: appId !== undefined || keyFileSet || installationId !== undefined, auth };
}

function tokenSettings(read: SettingReader): AuthSettings {
  const inline = read.str('github-token');
  const fileSet = read.has('github-token-file');
  const file = read.file('github-token-file');
  const auth = (): GitHubAuth | undefined => {
    if (inline !== undefined && fileSet) {
      read.problem('github-token', 'give either --github-token or --github-token-file, not both');
      return undefined;
    }
    const token = (inline ?? file ?? '').trim();
    if (token) return { type: 'token', token };
    if (file !== undefined) read.problem('github-token-file', 'the file is empty');
    return undefined;
  };
  return { given: inline !== undefined || fileSet, auth };
}

/** The policy file with the budget flags applied over its global budgets; undefined when either has a problem. */
export function policySettings(read: SettingReader): PolicyConfig | undefined {
  const input = policyFile(read);
  const ttl = read.raw('default-ttl');
  const ttlReason = ttl && ttlProblem(ttl.value.trim());
  if (ttl && ttlReason) read.bad('default-ttl', ttl, ttlReason);
  const cap = read.int('max-environments-per-repository', 0);
  if (!input) return undefined;
  const budgets = { ...((input.budgets as Record<string, unknown> | undefined) ?? {}) };
  if (ttl && !ttlReason) budgets.ttl = ttl.value.trim();
  if (cap !== undefined) budgets.maxEnvironmentsPerRepository = cap === 0 ? null : cap;
  try {
    return resolvePolicyConfig({ ...input, budgets });
  } catch (err) {
    read.problem('policy-file', (err as Error).message);
    return undefined;
  }
}

/** The policy file as YAML data ({} without one); undefined when it cannot be read or is invalid (each problem an issue). */
function policyFile(read: SettingReader): Record<string, unknown> | undefined {
  const before = read.issues.length;
  const text = read.file('policy-file');
  if (text === undefined) return read.issues.length > before ? undefined : {};
  let parsed: unknown;
  try {
    parsed = parseYaml(text);
  } catch (err) {
    read.problem('policy-file', `not valid YAML: ${(err as Error).message.split('\n')[0]}`);
  }
  for (const issue of validatePolicyConfig(parsed)) read.problem('policy-file', `${issue.path || '(root)'}: ${issue.message}`);
  if (read.issues.length > before) return undefined;
  return parsed && typeof parsed === 'object' && !Array.isArray(parsed) ? (parsed as Record<string, unknown>) : {};
}

export function resyncSettings(read: SettingReader): OperatorConfig['resync'] {
  return { intervalMs: read.duration('resync-interval', 10_000)!, maxDeletionsPerPass: read.int('resync-max-deletions', 0)! };
}
