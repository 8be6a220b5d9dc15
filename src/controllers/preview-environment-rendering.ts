// From a PreviewEnvironment to the objects to apply: which configuration counts (the head
// commit's for trusted pull requests, the base branch's plus the allowed values for untrusted
// ones), how it is rendered (in-process, or the repository's `.preview/main.ts` in the sandbox
// for trusted pull requests only), and the policy on the result. Everything a user can fix
// comes back as a RenderFailure; transient failures (git or GitHub unreachable, timeouts) throw.
// `.preview/` is read through a PreviewFileSource (GitHub's API in `run`, git in tests and
// `synth`); git checks the commit out only when a trusted pull request's `main.ts` must run.
import {
  defaultPreviewQuota,
  type Manifest,
  type PreviewConfig,
  type PreviewEnvironmentChartProps,
  type PreviewEnvironmentSpec,
  type PreviewIdentity,
} from '../../constructs/index.js';
import { GitOperationError, InvalidGitInputError } from '../git/git-errors.js';
import { formatPreviewConfigErrors, validatePreviewConfig, type PreviewConfigError } from '../synth/preview-config-validation.js';
import type { PreviewFileSource } from '../git/preview-files.js';
import {
  requireRegularFile,
  type CommitLocation,
  type RepositoryCache,
  type RepositoryLocation,
  type TreeEntry,
} from '../git/repository-cache.js';
import type { Semaphore } from '../kube/semaphore.js';
import { isTrusted } from '../policy/trust.js';
import type { TrustPolicy } from '../policy/policy-config.js';
import type { PullRequestFacts } from '../policy/pull-request-facts.js';
import { capResources, type ResourceCeilings } from '../policy/resource-ceilings.js';
import type { AllowedKinds } from '../synth/guard-allowed-kinds.js';
import { quotaExtendedResources } from '../synth/guard-extended-resources.js';
import {
  checkRenderedObjects,
  formatPolicyViolations,
  type PolicyViolation,
  type RenderPolicySettings,
} from '../synth/guard-rendered-objects.js';
import { mergeUntrustedConfig } from '../synth/untrusted-config.js';
import {
  previewChartProps,
  previewIdentity,
  renderPreviewInProcess,
  splitRendering,
  type PreviewRenderSettings,
} from '../synth/render-preview.js';
import type { SandboxRunner } from '../synth/sandbox.js';
import { SandboxError } from '../synth/sandbox-error.js';

export const configPath = '.preview/preview.yaml';
export const mainPath = '.preview/main.ts';

export type RenderFailureKind =
  /** No `.preview/preview.yaml` where it was looked for. */
  | 'ConfigMissing'
  /** `.preview/preview.yaml` does not validate (every error, with its path). */
  | 'ConfigInvalid'
  /** `.preview/main.ts` failed in the sandbox (time, memory, permission, exception, output). */
  | 'SandboxFailed'
  /** The chart itself threw (e.g. a construct validation). */
  | 'RenderFailed'
  /** The rendering breaks the policy (every violation, with its object and rule). */
  | 'PolicyViolation'
  /** The commit or repository cannot be read (force-pushed away, no access, bad coordinates). */
  | 'SourceUnavailable';

export interface RenderFailure {
  kind: RenderFailureKind;
  /** One paragraph for a condition or Event. */
  message: string;
  /** One line per problem, for the PR comment. */
  details: string[];
  configErrors?: PreviewConfigError[];
  violations?: PolicyViolation[];
}

export interface RenderedEnvironment {
  sha: string;
  trusted: boolean;
  /** Where the configuration came from: the head commit, or the base branch at `baseSha`. */
  configSource: { from: 'head' } | { from: 'base'; branch: string; sha: string };
  renderer: 'constructs' | 'sandbox';
  config: PreviewConfig;
  identity: PreviewIdentity;
  url: string | undefined;
  namespace: Manifest;
  /** The namespace's guards and the environment's objects, policy-checked, in the namespace. */
  objects: Manifest[];
  /** Which of `objects` are the namespace's guards, rendered by the operator from its settings (the same objects). */
  guards: ReadonlySet<Manifest>;
  /** Values of an untrusted pull request that were not applied, for the PR comment. */
  notes: string[];
}

export type RenderOutcome = { ok: true; rendered: RenderedEnvironment } | { ok: false; failure: RenderFailure };

export interface RenderRequest {
  name: string;
  spec: PreviewEnvironmentSpec;
  settings: PreviewRenderSettings;
  trust: TrustPolicy;
  allowedKinds: AllowedKinds;
  /** What the rendering policy allows beyond its strict defaults (default `defaultRenderPolicySettings`). */
  renderPolicy?: RenderPolicySettings;
  /** The most the environment's ResourceQuota may hold (the policy's `budgets.maxResources`; default none). */
  maxResources?: ResourceCeilings;
  /** An installation token for the repository (undefined for public or local repositories). */
  token?: string;
}

/** Where a repository's commits are read: `.preview/` (unless another source is given) and checkouts for `main.ts`. */
export type RepositorySource = PreviewFileSource & Pick<RepositoryCache, 'withCheckout'>;

export interface RenderDependencies {
  /** Checkouts of a trusted pull request's commit for its `.preview/main.ts`. */
  repositories: RepositorySource;
  /** Where `.preview/` is read, every listing, file and branch lookup of a render (default `repositories`, i.e. git). */
  files?: PreviewFileSource;
  sandbox: SandboxRunner;
  /**
   * Sandbox runs allowed at once, across every worker: each is a process of up to the
   * sandbox's memory cap, so the workers' count must not decide the operator's memory.
   */
  sandboxRuns: Semaphore;
}

/** The pull request as the trust rules see it. */
export function pullRequestFacts(spec: PreviewEnvironmentSpec): PullRequestFacts {
  const pr = spec.pullRequest;
  return {
    repository: { owner: spec.repository.owner, name: spec.repository.name, cloneUrl: spec.repository.cloneUrl },
    number: pr.number,
    state: 'open',
    merged: false,
    headSha: pr.headSha,
    headRef: pr.headRef,
    baseRef: pr.baseRef,
    author: pr.author ?? '',
    authorAssociation: pr.authorAssociation ?? 'NONE',
    labels: [...(pr.labels ?? [])],
    draft: pr.draft ?? false,
    fork: pr.fork ?? false,
  };
}

const failure = (kind: RenderFailureKind, message: string, details: string[] = [message], extra: Partial<RenderFailure> = {}): Failed => ({
  ok: false,
  failure: { kind, message, details, ...extra },
});

type Failed = Extract<RenderOutcome, { ok: false }>;

function configFailure(where: string, errors: PreviewConfigError[]): Failed {
  const lines = errors.map((e) => `${configPath}${e.path ? ` ${e.path}` : ''}${e.line ? ` (line ${e.line})` : ''}: ${e.message}`);
  return failure('ConfigInvalid', `${where} is invalid:\n${formatPreviewConfigErrors(errors)}`, lines, { configErrors: errors });
}

/**
 * Reads ahead what `renderEnvironment` reads first — the head commit's `.preview/` listing and
 * its preview.yaml — for a source that keeps what it read (GitHubPreviewFiles): `run` starts it
 * when a delivery is accepted, so the requests overlap the PreviewEnvironment's write and the
 * reconcile finds them answered. Failures are left to the render, which meets and reports them.
 */
export async function readAhead(files: PreviewFileSource, spec: PreviewEnvironmentSpec): Promise<void> {
  try {
    const { repository, pullRequest } = spec;
    await readHead(files, { cloneUrl: repository.cloneUrl, owner: repository.owner, repo: repository.name, sha: pullRequest.headSha });
  } catch {
    // The render reads again and reports what it finds.
  }
}

interface HeadFiles {
  headFiles: Map<string, TreeEntry>;
  headText: string | undefined;
}

/** The head commit's `.preview/`: one listing for both files; the configuration is read, main.ts only looked for. */
async function readHead(files: PreviewFileSource, head: CommitLocation): Promise<HeadFiles> {
  const headFiles = await files.listFiles(head, [configPath, mainPath]);
  const headConfig = headFiles.get(configPath);
  return { headFiles, headText: headConfig && (await files.readEntry(head, headConfig)) };
}

/** Git failures that say the source cannot be read as given (a user's or an administrator's to fix, or time's). */
const unavailableReasons = new Set([
  'commit-not-found',
  'branch-not-found',
  'repository-not-found',
  'authentication',
  'not-a-regular-file',
  'too-large',
]);

/** Renders the environment at its head commit; see the file comment for the rules. */
export async function renderEnvironment(request: RenderRequest, deps: RenderDependencies): Promise<RenderOutcome> {
  try {
    return await render(request, deps);
  } catch (err) {
    if (err instanceof InvalidGitInputError) return failure('SourceUnavailable', err.message);
    if (err instanceof GitOperationError && unavailableReasons.has(err.reason)) return failure('SourceUnavailable', err.message);
    throw err;
  }
}

/** What a render works from: where the commit is, and whether its author is trusted. */
interface RenderSource {
  files: PreviewFileSource;
  location: RepositoryLocation;
  head: CommitLocation;
  sha: string;
  trusted: boolean;
}

/** The configuration that counts, and where it came from. */
interface ChosenConfig {
  config: PreviewConfig;
  configSource: RenderedEnvironment['configSource'];
  notes: string[];
}

async function render(request: RenderRequest, deps: RenderDependencies): Promise<RenderOutcome> {
  const { spec, name } = request;
  const sha = spec.pullRequest.headSha;
  const location = { cloneUrl: spec.repository.cloneUrl, owner: spec.repository.owner, repo: spec.repository.name, token: request.token };
  const source: RenderSource = {
    files: deps.files ?? deps.repositories,
    location,
    head: { ...location, sha },
    sha,
    trusted: isTrusted(pullRequestFacts(spec), request.trust),
  };
  const { headFiles, headText } = await readHead(source.files, source.head);
  const configured = source.trusted ? headConfig(sha, headText) : await baseConfig(source, spec.pullRequest.baseRef, headText);
  if ('ok' in configured) return configured;
  const chosen = withinCeilings(configured, request.maxResources);

  const identity = previewIdentity(name, spec, chosen.config, sha, request.settings.domain);
  const props = previewChartProps(identity, spec, chosen.config, request.settings);
  let operator;
  try {
    operator = renderPreviewInProcess(props);
  } catch (err) {
    return failure('RenderFailed', `the configuration could not be rendered: ${(err as Error).message}`);
  }
  // Only a trusted pull request's code runs, and only in the sandbox; an untrusted one's main.ts is never read.
  const main = source.trusted ? headFiles.get(mainPath) : undefined;
  const ran = main ? await runMain(source, main, props, deps) : { manifests: operator.manifests, renderer: 'constructs' as const };
  if ('ok' in ran) return ran;

  const split = splitRendering(operator, ran.manifests, identity.namespace);
  const quota = split.guards.find((g) => g.kind === 'ResourceQuota' && g.apiVersion === 'v1');
  const checked = checkPolicy(split.objects, identity, request, quota ? quotaExtendedResources(quota) : []);
  if ('ok' in checked) return checked;
  const { config, configSource, notes } = chosen;
  return {
    ok: true,
    rendered: {
      sha,
      trusted: source.trusted,
      configSource,
      renderer: ran.renderer,
      config,
      identity,
      url: operator.url,
      namespace: split.namespace,
      objects: [...split.guards, ...checked.objects],
      guards: new Set(split.guards),
      notes,
    },
  };
}

/** The configuration with its `resources` cut to the policy's ceilings, and a note for each cut. */
function withinCeilings(chosen: ChosenConfig, ceilings: ResourceCeilings | undefined): ChosenConfig {
  if (!ceilings) return chosen;
  const { resources, notes } = capResources(chosen.config.resources, ceilings, defaultPreviewQuota);
  const config: PreviewConfig = { ...chosen.config };
  if (resources) (config as { resources?: PreviewConfig['resources'] }).resources = resources;
  return { ...chosen, config, notes: [...chosen.notes, ...notes] };
}

/** A trusted pull request: the head commit's configuration. */
function headConfig(sha: string, headText: string | undefined): ChosenConfig | Failed {
  if (headText === undefined) return failure('ConfigMissing', `the repository has no ${configPath} at ${sha.slice(0, 12)}`);
  const validation = validatePreviewConfig(headText);
  if (!validation.ok) return configFailure(`${configPath} at ${sha.slice(0, 12)}`, validation.errors);
  return { config: validation.config, configSource: { from: 'head' }, notes: [] };
}

/** An untrusted pull request: the base branch's configuration, with only the values the PR may change. */
async function baseConfig(source: RenderSource, branch: string, headText: string | undefined): Promise<ChosenConfig | Failed> {
  const baseSha = await source.files.resolveBranch(source.location, branch);
  const baseText = await source.files.readFile({ ...source.location, sha: baseSha }, configPath);
  if (baseText === undefined) {
    const message =
      `the base branch ${branch} has no ${configPath}; ` + "an untrusted pull request is previewed with the base branch's configuration";
    return failure('ConfigMissing', message);
  }
  const base = validatePreviewConfig(baseText);
  if (!base.ok) return configFailure(`${configPath} on the base branch ${branch}`, base.errors);
  let proposed: PreviewConfig | undefined;
  if (headText !== undefined) {
    const validation = validatePreviewConfig(headText);
    if (!validation.ok) return configFailure(`${configPath} at ${source.sha.slice(0, 12)}`, validation.errors);
    proposed = validation.config;
  }
  const merged = mergeUntrustedConfig(base.config, proposed);
  const notes = merged.ignored.map((n) => `not applied (untrusted pull request): ${n}`);
  return { config: merged.config, configSource: { from: 'base', branch, sha: baseSha }, notes };
}

/** A trusted pull request's `.preview/main.ts`, in the sandbox, on a checkout of its commit. */
async function runMain(
  source: RenderSource,
  main: TreeEntry,
  props: PreviewEnvironmentChartProps,
  deps: RenderDependencies,
): Promise<{ manifests: Manifest[]; renderer: 'sandbox' } | Failed> {
  requireRegularFile(main, source.sha);
  try {
    const result = await deps.sandboxRuns.run(() =>
      deps.repositories.withCheckout(source.head, (dir) => deps.sandbox.run({ checkoutDir: dir, input: props })),
    );
    return { manifests: result.manifests, renderer: 'sandbox' };
  } catch (err) {
    if (err instanceof SandboxError) return failure('SandboxFailed', err.message);
    throw err;
  }
}

/** The rendered objects under the preview policy: every violation fails the rendering. */
function checkPolicy(
  objects: Manifest[],
  identity: PreviewIdentity,
  request: RenderRequest,
  boundedResources: readonly string[],
): { objects: Manifest[] } | Failed {
  const { settings } = request;
  const issuer = settings.tls === false ? undefined : settings.tls.issuer;
  const checked = checkRenderedObjects(objects, {
    namespace: identity.namespace,
    host: identity.host,
    allowedKinds: request.allowedKinds,
    podSecurity: settings.podSecurity,
    ingressClassName: settings.ingressClassName,
    quotaExtendedResources: boundedResources,
    ...request.renderPolicy,
    certificateIssuer:
      settings.tls === false ? undefined : { name: issuer?.name ?? 'preview-issuer', kind: issuer?.kind ?? 'ClusterIssuer' },
  });
  const count = checked.violations.length;
  if (count === 0) return { objects: checked.objects };
  const message =
    `the rendering breaks the preview policy (${count} violation${count === 1 ? '' : 's'}); nothing was applied:\n` +
    formatPolicyViolations(checked.violations);
  return failure(
    'PolicyViolation',
    message,
    checked.violations.map((v) => `${v.object}: ${v.message} [${v.rule}]`),
    {
      violations: checked.violations,
    },
  );
}
