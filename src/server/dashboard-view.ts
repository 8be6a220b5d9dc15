// What the dashboard shows of a PreviewEnvironment, as plain data: the fields it may show and
// nothing else. Whatever is not copied here cannot reach a browser — never the clone URL (it
// may carry credentials) nor the spec's overrides (env values may be tokens). Objects come from
// the cluster, where anyone who may write a PreviewEnvironment (and every PR author, through
// branch names and status messages) chooses text: links are kept only when they are http(s).
import type { PreviewEnvironmentSpec, PreviewEnvironmentStatus } from '../../constructs/api-types.js';

/** What the dashboard reads of a PreviewEnvironment; any field may be missing on an object written by hand. */
export interface DashboardObject {
  metadata: { name?: string; creationTimestamp?: string; deletionTimestamp?: string; resourceVersion?: string };
  spec?: unknown;
  status?: unknown;
}

export interface ConditionView {
  type: string;
  status: string;
  reason: string;
  message: string;
  since?: string;
}

export interface ResourceView {
  kind: string;
  name: string;
  ready: boolean;
  message?: string;
}

export interface EnvironmentView {
  name: string;
  /** `owner/name`. */
  repository: string;
  repositoryUrl?: string;
  pullRequest?: number;
  pullRequestUrl?: string;
  headRef?: string;
  headSha?: string;
  author?: string;
  authorUrl?: string;
  fork: boolean;
  phase: string;
  /** The preview's address, only when it is an http(s) URL. */
  url?: string;
  namespace?: string;
  deployedSha?: string;
  createdAt?: string;
  expiresAt?: string;
  lastReconciled?: string;
  conditions: ConditionView[];
  lastError?: { reason: string; message: string };
  resources: ResourceView[];
}

type SpecView = {
  repository?: Partial<PreviewEnvironmentSpec['repository']>;
  pullRequest?: Partial<PreviewEnvironmentSpec['pullRequest']>;
};

/** The dashboard's view of one environment. `githubWebUrl` is where pull requests are (e.g. `https://github.com`). */
export function environmentView(env: DashboardObject, githubWebUrl: string): EnvironmentView {
  const spec = (record(env.spec) ?? {}) as SpecView;
  const status = (record(env.status) ?? {}) as PreviewEnvironmentStatus;
  const owner = text(spec.repository?.owner);
  const repo = text(spec.repository?.name);
  const pr = spec.pullRequest ?? {};
  const number = typeof pr.number === 'number' && Number.isSafeInteger(pr.number) && pr.number > 0 ? pr.number : undefined;
  const repositoryUrl = owner && repo ? webUrl(githubWebUrl, [owner, repo]) : undefined;
  const author = text(pr.author);
  const conditions = conditionViews(status.conditions);
  const phase = env.metadata.deletionTimestamp ? 'Terminating' : (text(status.phase) ?? 'Pending');
  return {
    name: env.metadata.name ?? '',
    repository: owner && repo ? `${owner}/${repo}` : (owner ?? repo ?? ''),
    ...optional({
      repositoryUrl,
      pullRequest: number,
      pullRequestUrl: repositoryUrl && number !== undefined ? `${repositoryUrl}/pull/${number}` : undefined,
      headRef: text(pr.headRef),
      headSha: text(pr.headSha),
      author,
      authorUrl: author ? webUrl(githubWebUrl, [author]) : undefined,
      url: httpUrl(status.url),
      namespace: text(status.namespace),
      deployedSha: text(status.deployedSha),
      createdAt: text(env.metadata.creationTimestamp),
      expiresAt: text(status.expiresAt),
      lastReconciled: text(status.lastReconciled),
      lastError: lastError(phase, conditions),
    }),
    fork: pr.fork === true,
    phase,
    conditions,
    resources: resourceViews(status.resources),
  };
}

/**
 * The error a user should see first: a failed environment's Ready reason, a stalled one's
 * (kstatus `Stalled`), else the last reconcile's failure. Waiting is not an error.
 */
export function lastError(phase: string, conditions: readonly ConditionView[]): { reason: string; message: string } | undefined {
  const find = (type: string, status: string) => conditions.find((c) => c.type === type && c.status === status);
  const failed = phase === 'Failed' ? (find('Stalled', 'True') ?? find('Ready', 'False')) : undefined;
  const cause = failed ?? find('Stalled', 'True') ?? find('Reconciled', 'False');
  return cause ? { reason: cause.reason, message: cause.message } : undefined;
}

/** Where a GitHub API base URL's web pages are: api.github.com → github.com; GHES `…/api/v3` → its host. */
export function githubWebUrl(apiUrl: string): string {
  const url = new URL(apiUrl);
  if (url.hostname === 'api.github.com') return 'https://github.com';
  const path = url.pathname.replace(/\/+$/, '').replace(/\/api\/v3$/, '');
  return `${url.origin}${path}`;
}

/** `value` when it is an absolute http(s) URL without credentials, else undefined (no `javascript:`, no `data:`). */
export function httpUrl(value: unknown): string | undefined {
  if (typeof value !== 'string' || value.length > 2048) return undefined;
  try {
    const url = new URL(value);
    if (url.protocol !== 'http:' && url.protocol !== 'https:') return undefined;
    if (url.username || url.password || !/^https?:\/\//i.test(value)) return undefined;
    // As written (the status's spelling), now that it is known to be a plain web address.
    return value;
  } catch {
    return undefined;
  }
}

function webUrl(base: string, segments: string[]): string {
  return `${base.replace(/\/+$/, '')}/${segments.map(encodeURIComponent).join('/')}`;
}

function conditionViews(value: unknown): ConditionView[] {
  if (!Array.isArray(value)) return [];
  return value.flatMap((item) => {
    const c = record(item);
    const type = text(c?.type);
    if (!c || !type) return [];
    return [
      {
        type,
        status: text(c.status) ?? 'Unknown',
        reason: text(c.reason) ?? '',
        message: text(c.message) ?? '',
        ...optional({ since: text(c.lastTransitionTime) }),
      },
    ];
  });
}

function resourceViews(value: unknown): ResourceView[] {
  if (!Array.isArray(value)) return [];
  return value.flatMap((item) => {
    const r = record(item);
    if (!r) return [];
    return [{ kind: text(r.kind) ?? '', name: text(r.name) ?? '', ready: r.ready === true, ...optional({ message: text(r.message) }) }];
  });
}

function record(value: unknown): Record<string, unknown> | undefined {
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;
}

function text(value: unknown): string | undefined {
  return typeof value === 'string' && value !== '' ? value : undefined;
}

/** Drops undefined fields, so a view holds only what is there (and compares and serialises cleanly). */
function optional<T extends Record<string, unknown>>(fields: T): Partial<T> {
  return Object.fromEntries(Object.entries(fields).filter(([, v]) => v !== undefined)) as Partial<T>;
}
