// `preview-operator synth --repo <path> [--pr <n>] [--sha <sha>]`: what a pull request of a
// local repository would get, printed as YAML — the tool for writing `.preview/`. It goes
// through the PreviewEnvironment controller's own rendering (configuration validation, the
// sandbox for `.preview/main.ts`, the policy on the result), reading the commit from git
// exactly as the operator does, so what it prints is what the cluster would receive.
import { execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { stringify } from 'yaml';
import type { PreviewEnvironmentSpec } from '../constructs/index.js';
import type { OperatorConfig } from './config.js';
import { mainPath, renderEnvironment } from './controllers/preview-environment-rendering.js';
import { commitFiles } from './git/commit-files.js';
import { RepositoryCache } from './git/repository-cache.js';
import { Semaphore } from './kube/semaphore.js';
import { environmentName } from './intake/pull-request-environment-name.js';
import { effectivePolicy } from './policy/policy-config.js';
import { AllowedKinds } from './synth/guard-allowed-kinds.js';
import { typeCheckPreview } from './synth/preview-type-check.js';
import { sandboxRunnerFor } from './synth/sandbox-remote.js';

const run = promisify(execFile);

export interface SynthRequest {
  /** A local git repository (its working tree or a bare repository). */
  repo: string;
  pullRequest: number;
  /** Default: HEAD. */
  sha?: string;
  /** `owner/name` (default: from the `origin` remote if it is on GitHub, else `local/<directory>`). */
  repository?: string;
}

export interface SynthOutput {
  ok: boolean;
  /** The manifests as YAML documents (ok), else empty. */
  yaml: string;
  /** What a user should read on stderr: the commit rendered, notes, or the failure with every detail. */
  messages: string[];
}

async function git(repo: string, ...args: string[]): Promise<string> {
  const { stdout } = await run('git', ['-C', repo, ...args], { env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: os.homedir() } });
  return stdout.trim();
}

/** Owner and name of the repository, as the pull request's payload would give them. */
type RepositoryName = { owner: string; name: string };

async function repositoryName(repo: string, given: string | undefined): Promise<RepositoryName> {
  const text =
    given ??
    (await git(repo, 'remote', 'get-url', 'origin').then(
      (url) => /github\.com[/:]([^/]+)\/([^/]+?)(\.git)?$/.exec(url)?.slice(1, 3).join('/'),
      () => undefined,
    )) ??
    `local/${path.basename(path.resolve(repo)).replace(/\.git$/, '')}`;
  const [owner, name, ...rest] = text.split('/');
  if (!owner || !name || rest.length > 0) throw new Error(`--repository must be owner/name, not "${text}"`);
  return { owner, name };
}

/** A whole program's check takes 2–4 s (the construct library's types are large); this bounds a pathological one. */
const typeCheckTimeoutMs = 60_000;

/** `.preview/main.ts` of the commit type-checked against the construct library: its errors, or notes. */
async function typeCheckMain(repo: string, sha: string): Promise<{ errors: string[]; notes: string[] }> {
  const files = await commitFiles(repo, sha);
  if (!files.has(mainPath)) return { errors: [], notes: [] };
  const result = await typeCheckPreview(files, { entry: mainPath, timeoutMs: typeCheckTimeoutMs });
  if (!result.checked) return { errors: [], notes: [`note: ${mainPath} was not type-checked: ${result.reason}`] };
  if (result.errors.length === 0) return { errors: [], notes: [] };
  const count = `${result.errors.length} error${result.errors.length === 1 ? '' : 's'}`;
  return { errors: [`TypeError: ${mainPath} does not type-check (${count}); nothing was rendered:`, ...result.errors], notes: [] };
}

/** The commit to render and what to tell about it first. */
interface SynthCommit {
  repo: string;
  sha: string;
  branch: string;
  repository: RepositoryName;
  messages: string[];
}

async function resolveCommit(request: SynthRequest): Promise<SynthCommit> {
  const repo = path.resolve(request.repo);
  const sha = await git(repo, 'rev-parse', '--verify', `${request.sha ?? 'HEAD'}^{commit}`).catch(() => {
    throw new Error(`${request.sha ?? 'HEAD'} is not a commit of the git repository ${repo}`);
  });
  const branch = await git(repo, 'rev-parse', '--abbrev-ref', 'HEAD').catch(() => 'HEAD');
  const repository = await repositoryName(repo, request.repository);
  const messages = [`rendering ${repository.owner}/${repository.name} pull request #${request.pullRequest} at ${sha}`];
  if (!request.sha && (await git(repo, 'status', '--porcelain', '--untracked-files=no').catch(() => ''))) {
    messages.push('note: uncommitted changes are not rendered; the operator, too, sees only commits');
  }
  return { repo, sha, branch, repository, messages };
}

/** The spec a pull request from the repository's own author would get: trusted, so `.preview/main.ts` runs in the sandbox. */
function synthSpec(repo: string, repository: RepositoryName, pullRequest: number, sha: string, branch: string): PreviewEnvironmentSpec {
  return {
    repository: { ...repository, cloneUrl: pathToFileURL(repo).href },
    pullRequest: {
      number: pullRequest,
      headSha: sha,
      headRef: branch,
      baseRef: branch,
      author: 'synth',
      authorAssociation: 'OWNER',
      labels: [],
      draft: false,
      fork: false,
    },
  };
}

function renderInputs(config: OperatorConfig, repository: RepositoryName, pullRequest: number, spec: PreviewEnvironmentSpec) {
  return {
    name: environmentName(repository, pullRequest),
    spec,
    settings: {
      domain: config.previews.domain,
      ingressClassName: config.previews.ingressClass,
      tls: config.previews.tls,
      podSecurity: config.previews.podSecurity,
    },
    trust: effectivePolicy(config.policy, repository).trust,
    allowedKinds: new AllowedKinds(config.previews.allowedKinds),
    renderPolicy: config.previews.renderPolicy,
  };
}

export async function synthesize(request: SynthRequest, config: OperatorConfig): Promise<SynthOutput> {
  const { repo, sha, branch, repository, messages } = await resolveCommit(request);
  const typeCheck = await typeCheckMain(repo, sha);
  if (typeCheck.errors.length > 0) return { ok: false, yaml: '', messages: [...messages, ...typeCheck.errors] };
  messages.push(...typeCheck.notes);
  const spec = synthSpec(repo, repository, request.pullRequest, sha, branch);
  const cacheDir = await mkdtemp(path.join(os.tmpdir(), 'preview-synth-'));
  try {
    const git = {
      cacheDir,
      allowedProtocols: ['file:'],
      maxConcurrentGitProcesses: config.git.concurrency,
      gitTimeoutMs: config.git.timeoutMs,
    };
    const outcome = await renderEnvironment(renderInputs(config, repository, request.pullRequest, spec), {
      repositories: new RepositoryCache(git),
      sandbox: sandboxRunnerFor(config.sandbox),
      sandboxRuns: new Semaphore(config.sandbox.concurrency),
    });
    if (!outcome.ok) return { ok: false, yaml: '', messages: [...messages, `${outcome.failure.kind}: ${outcome.failure.message}`] };
    const { rendered } = outcome;
    const renderer = rendered.renderer === 'sandbox' ? '.preview/main.ts in the sandbox' : 'the constructs';
    messages.push(`rendered with ${renderer}; namespace ${rendered.identity.namespace}${rendered.url ? `, URL ${rendered.url}` : ''}`);
    messages.push(...rendered.notes);
    const yaml = [rendered.namespace, ...rendered.objects].map((m) => stringify(m, { lineWidth: 0 })).join('---\n');
    return { ok: true, yaml, messages };
  } finally {
    await rm(cacheDir, { recursive: true, force: true });
  }
}
