// One handler per GitHub operation the operator uses, keyed by operationId, each doing
// what GitHub documents (filters, defaults, side effects such as auto_inactive).
import type { RouteContext } from './emulator.js';
import { paginate } from './pagination.js';
import { error, notFound, type Reply } from './replies.js';
import { repositoryContentRoutes } from './repository-contents.js';
import {
  appJson,
  authenticatedUserJson,
  checkRunJson,
  checkSuiteJson,
  combinedState,
  commitStatusJson,
  deploymentJson,
  deploymentStatusJson,
  installationJson,
  issueCommentJson,
  labelJson,
  pullRequestJson,
  pullRequestSimpleJson,
  repositoryJson,
} from './representations.js';
import {
  actingAccount,
  actingApp,
  identityKey,
  timestamp,
  type CheckConclusion,
  type CheckRunState,
  type CheckStatus,
  type CommitStatusState,
  type DeploymentState,
  type DeploymentStatusValue,
  type RepositoryState,
} from './state.js';

export type { Reply } from './replies.js';

/** Synchronous for the emulator's own state; asynchronous where git data is read. */
export type RouteHandler = (ctx: RouteContext) => Reply | Promise<Reply>;

function page<T>(ctx: RouteContext, items: T[], render: (item: T) => unknown): Reply {
  const p = paginate(items, ctx.query, ctx.selfUrl);
  return { status: 200, body: p.items.map(render), headers: p.link ? { link: p.link } : {} };
}

function wrappedPage<T>(ctx: RouteContext, key: string, items: T[], render: (item: T) => unknown): Reply {
  const p = paginate(items, ctx.query, ctx.selfUrl);
  return { status: 200, body: { total_count: items.length, [key]: p.items.map(render) }, headers: p.link ? { link: p.link } : {} };
}

/** A SHA for a ref name GitHub would resolve: a full SHA, a branch, or a pull request's head. */
function resolveRef(repo: RepositoryState, ref: string): string | undefined {
  if (/^[0-9a-f]{40}$/i.test(ref)) return ref.toLowerCase();
  const name = ref.replace(/^refs\/heads\//, '').replace(/^heads\//, '');
  const branch = repo.branches.get(name);
  if (branch) return branch;
  const pull = /^(?:refs\/)?pull\/(\d+)\/head$/.exec(ref);
  if (pull) return repo.pulls.get(Number(pull[1]))?.head.sha;
  return undefined;
}

function needsApp(ctx: RouteContext): Reply | undefined {
  if (ctx.identity.kind === 'user') return error(403, 'You must authenticate via a GitHub App.');
  return undefined;
}

// ---- pulls -------------------------------------------------------------------------------------

const listPulls: RouteHandler = (ctx) => {
  const state = ctx.query.get('state') ?? 'open';
  const base = ctx.query.get('base');
  const head = ctx.query.get('head');
  const sort = ctx.query.get('sort') ?? 'created';
  const direction = ctx.query.get('direction') ?? (sort === 'created' ? 'desc' : 'asc');
  const pulls = [...ctx.repo.pulls.values()]
    .filter((p) => state === 'all' || p.state === state)
    .filter((p) => !base || p.base.ref === base)
    .filter((p) => !head || `${p.head.repo.owner.login}:${p.head.ref}` === head)
    .sort((a, b) => {
      const key = sort === 'updated' ? 'updatedAt' : 'createdAt';
      const cmp = a[key].localeCompare(b[key]) || a.number - b.number;
      return direction === 'asc' ? cmp : -cmp;
    });
  return page(ctx, pulls, (p) => pullRequestSimpleJson(ctx.repo, p, ctx.urls));
};

const getPull: RouteHandler = (ctx) => {
  const pr = ctx.repo.pulls.get(Number(ctx.params.pull_number));
  return pr ? { status: 200, body: pullRequestJson(ctx.repo, pr, ctx.urls) } : notFound();
};

// ---- issue comments ----------------------------------------------------------------------------

const listComments: RouteHandler = (ctx) => {
  const number = Number(ctx.params.issue_number);
  if (!ctx.repo.pulls.has(number)) return notFound();
  const since = ctx.query.get('since');
  const comments = ctx.repo.comments.filter((c) => c.issueNumber === number && (!since || c.updatedAt >= since));
  return page(ctx, comments, (c) => issueCommentJson(ctx.repo, c, ctx.urls));
};

const createComment: RouteHandler = (ctx) => {
  const number = Number(ctx.params.issue_number);
  const pr = ctx.repo.pulls.get(number);
  if (!pr) return notFound();
  if (pr.locked) return error(403, 'Unable to create comment because issue is locked.');
  const now = timestamp();
  const comment = {
    id: ctx.gh.newId(),
    issueNumber: number,
    body: String((ctx.body as { body: unknown }).body),
    user: actingAccount(ctx.identity),
    app: actingApp(ctx.identity),
    createdAt: now,
    updatedAt: now,
  };
  ctx.repo.comments.push(comment);
  const json = issueCommentJson(ctx.repo, comment, ctx.urls);
  return { status: 201, body: json, headers: { location: json.url } };
};

const getComment: RouteHandler = (ctx) => {
  const comment = ctx.repo.comments.find((c) => c.id === Number(ctx.params.comment_id));
  return comment ? { status: 200, body: issueCommentJson(ctx.repo, comment, ctx.urls) } : notFound();
};

const updateComment: RouteHandler = (ctx) => {
  const comment = ctx.repo.comments.find((c) => c.id === Number(ctx.params.comment_id));
  if (!comment) return notFound();
  comment.body = String((ctx.body as { body: unknown }).body);
  comment.updatedAt = timestamp();
  return { status: 200, body: issueCommentJson(ctx.repo, comment, ctx.urls) };
};

const deleteComment: RouteHandler = (ctx) => {
  const index = ctx.repo.comments.findIndex((c) => c.id === Number(ctx.params.comment_id));
  if (index < 0) return notFound();
  ctx.repo.comments.splice(index, 1);
  return { status: 204 };
};

// ---- issue labels ------------------------------------------------------------------------------

/** GitHub answers with the labels left on the issue, or 404 when the label is not on it. */
const removeLabel: RouteHandler = (ctx) => {
  const pr = ctx.repo.pulls.get(Number(ctx.params.issue_number));
  if (!pr) return notFound();
  const wanted = ctx.params.name!.toLowerCase();
  if (!pr.labels.some((l) => l.name.toLowerCase() === wanted)) return error(404, 'Label does not exist');
  pr.labels = pr.labels.filter((l) => l.name.toLowerCase() !== wanted);
  pr.updatedAt = timestamp();
  return { status: 200, body: pr.labels.map((l) => labelJson(l, ctx.repo, ctx.urls)) };
};

// ---- deployments -------------------------------------------------------------------------------

const createDeployment: RouteHandler = (ctx) => {
  const b = ctx.body as {
    ref: string;
    task?: string;
    auto_merge?: boolean;
    required_contexts?: string[];
    payload?: Record<string, unknown> | string;
    environment?: string;
    description?: string | null;
    transient_environment?: boolean;
    production_environment?: boolean;
  };
  const sha = resolveRef(ctx.repo, b.ref);
  if (!sha) return error(422, `No ref found for: ${b.ref}`);
  // GitHub verifies commit statuses before creating a deployment unless told which (or none) to check.
  const latest = latestStatuses(ctx.repo.commitStatuses.filter((s) => s.sha === sha));
  const required = b.required_contexts ?? latest.map((s) => s.context);
  const failing = required.filter((context) => latest.find((s) => s.context === context)?.state !== 'success');
  if (failing.length > 0) {
    return error(409, 'Conflict: Commit status checks failed for ' + b.ref + '.', {
      errors: failing.map((context) => ({
        contexts: [{ context, state: latest.find((s) => s.context === context)?.state ?? 'missing' }],
        resource: 'Deployment',
        field: 'required_contexts',
      })),
    });
  }
  const environment = b.environment ?? 'production';
  const now = timestamp();
  const deployment: DeploymentState = {
    id: ctx.gh.newId(),
    sha,
    ref: b.ref,
    task: b.task ?? 'deploy',
    environment,
    originalEnvironment: environment,
    description: b.description === undefined ? '' : b.description,
    payload: b.payload ?? '',
    transientEnvironment: b.transient_environment ?? false,
    productionEnvironment: b.production_environment ?? environment === 'production',
    creator: actingAccount(ctx.identity),
    app: actingApp(ctx.identity),
    createdAt: now,
    updatedAt: now,
    statuses: [],
    autoMerge: b.auto_merge ?? true,
    requiredContexts: b.required_contexts ?? null,
  };
  ctx.repo.deployments.push(deployment);
  const json = deploymentJson(ctx.repo, deployment, ctx.urls);
  return { status: 201, body: json, headers: { location: json.url } };
};

const listDeployments: RouteHandler = (ctx) => {
  const filters = (['sha', 'ref', 'task', 'environment'] as const)
    .map((k) => [k, ctx.query.get(k)] as const)
    .filter(([, v]) => v !== null && v !== 'none');
  const deployments = ctx.repo.deployments
    .filter((d) => filters.every(([k, v]) => d[k] === v))
    .slice()
    .reverse();
  return page(ctx, deployments, (d) => deploymentJson(ctx.repo, d, ctx.urls));
};

const getDeployment: RouteHandler = (ctx) => {
  const d = ctx.repo.deployments.find((x) => x.id === Number(ctx.params.deployment_id));
  return d ? { status: 200, body: deploymentJson(ctx.repo, d, ctx.urls) } : notFound();
};

const createDeploymentStatus: RouteHandler = (ctx) => {
  const d = ctx.repo.deployments.find((x) => x.id === Number(ctx.params.deployment_id));
  if (!d) return notFound();
  const b = ctx.body as {
    state: DeploymentStatusValue;
    target_url?: string;
    log_url?: string;
    description?: string;
    environment?: string;
    environment_url?: string;
    auto_inactive?: boolean;
  };
  if (b.description !== undefined && b.description.length > 140) {
    return error(422, 'Validation Failed', {
      errors: [
        {
          resource: 'DeploymentStatus',
          code: 'custom',
          field: 'description',
          message: 'description is too long (maximum is 140 characters)',
        },
      ],
    });
  }
  if (b.environment !== undefined) d.environment = b.environment;
  const now = timestamp();
  const status = {
    id: ctx.gh.newId(),
    state: b.state,
    description: b.description ?? '',
    environment: d.environment,
    environmentUrl: b.environment_url ?? '',
    logUrl: b.log_url ?? b.target_url ?? '',
    targetUrl: b.log_url ?? b.target_url ?? '',
    creator: actingAccount(ctx.identity),
    app: actingApp(ctx.identity),
    createdAt: now,
  };
  d.statuses.push(status);
  d.updatedAt = now;
  if (b.state === 'success' && b.auto_inactive !== false) {
    // GitHub's auto_inactive: only prior *non-transient, non-production* deployments of the
    // same environment whose latest state is success get an inactive status.
    for (const other of ctx.repo.deployments) {
      if (other === d || other.environment !== d.environment || other.transientEnvironment || other.productionEnvironment) continue;
      if (other.statuses.at(-1)?.state !== 'success') continue;
      other.statuses.push({
        ...status,
        id: ctx.gh.newId(),
        state: 'inactive',
        description: '',
        environmentUrl: '',
        logUrl: '',
        targetUrl: '',
      });
    }
  }
  const json = deploymentStatusJson(ctx.repo, d, status, ctx.urls);
  return { status: 201, body: json, headers: { location: json.url } };
};

const listDeploymentStatuses: RouteHandler = (ctx) => {
  const d = ctx.repo.deployments.find((x) => x.id === Number(ctx.params.deployment_id));
  if (!d) return notFound();
  return page(ctx, d.statuses.slice().reverse(), (s) => deploymentStatusJson(ctx.repo, d, s, ctx.urls));
};

// ---- checks ------------------------------------------------------------------------------------

interface CheckRunBody {
  name?: string;
  head_sha?: string;
  details_url?: string;
  external_id?: string;
  status?: CheckStatus;
  conclusion?: CheckConclusion;
  started_at?: string;
  completed_at?: string;
  output?: { title?: string; summary?: string; text?: string };
}

/** GitHub counts a check run's output in bytes (the OpenAPI description's maxLength counts characters). */
const maxOutputBytes = 65_535;

function outputTooLarge(output: CheckRunBody['output']): Reply | undefined {
  for (const field of ['summary', 'text'] as const) {
    const value = output?.[field];
    if (value !== undefined && Buffer.byteLength(value) > maxOutputBytes) {
      return error(422, 'Invalid request.', {
        errors: [`Only ${maxOutputBytes} bytes are allowed. ${field} exceeds a maximum bytesize of ${maxOutputBytes}`],
      });
    }
  }
  return undefined;
}

const createCheckRun: RouteHandler = (ctx) => {
  const denied = needsApp(ctx);
  if (denied) return denied;
  const app = actingApp(ctx.identity)!;
  const b = ctx.body as CheckRunBody & { name: string; head_sha: string };
  if (!/^[0-9a-f]{40}$/i.test(b.head_sha))
    return error(422, 'Validation Failed', { errors: [{ resource: 'CheckRun', code: 'invalid', field: 'head_sha' }] });
  if (b.status === 'completed' && !b.conclusion)
    return error(422, 'Validation Failed', { errors: [{ resource: 'CheckRun', code: 'missing_field', field: 'conclusion' }] });
  const tooLarge = outputTooLarge(b.output);
  if (tooLarge) return tooLarge;
  const run = ctx.gh.createCheckRun(ctx.repo, app, b);
  return { status: 201, body: checkRunJson(ctx.repo, run, ctx.urls) };
};

const updateCheckRun: RouteHandler = (ctx) => {
  const denied = needsApp(ctx);
  if (denied) return denied;
  const run = ctx.repo.checkRuns.find((r) => r.id === Number(ctx.params.check_run_id));
  if (!run) return notFound();
  if (run.app !== actingApp(ctx.identity))
    return error(
      403,
      'Invalid app_id `' + actingApp(ctx.identity)!.id + '` - check run can only be modified by the GitHub App that created it.',
    );
  const b = ctx.body as CheckRunBody;
  if (b.status === 'completed' && !b.conclusion && !run.conclusion)
    return error(422, 'Validation Failed', { errors: [{ resource: 'CheckRun', code: 'missing_field', field: 'conclusion' }] });
  const tooLarge = outputTooLarge(b.output);
  if (tooLarge) return tooLarge;
  if (b.name !== undefined) run.name = b.name;
  if (b.details_url !== undefined) run.detailsUrl = b.details_url;
  if (b.external_id !== undefined) run.externalId = b.external_id;
  if (b.started_at !== undefined) run.startedAt = b.started_at;
  if (b.output) {
    const { title, summary, text } = run.output;
    run.output = { title: b.output.title ?? title, summary: b.output.summary ?? summary, text: b.output.text ?? text };
  }
  if (b.conclusion !== undefined) {
    run.conclusion = b.conclusion;
    run.status = 'completed';
    run.completedAt = b.completed_at ?? timestamp();
  } else if (b.status !== undefined) {
    run.status = b.status;
    if (b.status !== 'completed') {
      run.conclusion = null;
      run.completedAt = null;
    }
  }
  run.suite.updatedAt = timestamp();
  return { status: 200, body: checkRunJson(ctx.repo, run, ctx.urls) };
};

const getCheckRun: RouteHandler = (ctx) => {
  const run = ctx.repo.checkRuns.find((r) => r.id === Number(ctx.params.check_run_id));
  return run ? { status: 200, body: checkRunJson(ctx.repo, run, ctx.urls) } : notFound();
};

const listCheckRunsForRef: RouteHandler = (ctx) => {
  const sha = resolveRef(ctx.repo, ctx.params.ref!);
  if (!sha) return error(422, `No commit found for SHA: ${ctx.params.ref}`);
  const name = ctx.query.get('check_name');
  const status = ctx.query.get('status');
  const appId = ctx.query.get('app_id');
  let runs = ctx.repo.checkRuns.filter(
    (r) => r.headSha === sha && (!name || r.name === name) && (!status || r.status === status) && (!appId || r.app.id === Number(appId)),
  );
  if ((ctx.query.get('filter') ?? 'latest') === 'latest') {
    const latest = new Map<string, CheckRunState>();
    for (const r of runs) latest.set(`${r.app.id}/${r.name}`, r);
    runs = [...latest.values()];
  }
  return wrappedPage(ctx, 'check_runs', runs.slice().reverse(), (r) => checkRunJson(ctx.repo, r, ctx.urls));
};

const listSuitesForRef: RouteHandler = (ctx) => {
  const sha = resolveRef(ctx.repo, ctx.params.ref!);
  if (!sha) return error(422, `No commit found for SHA: ${ctx.params.ref}`);
  const appId = ctx.query.get('app_id');
  const name = ctx.query.get('check_name');
  const suites = ctx.repo.checkSuites.filter(
    (s) =>
      s.headSha === sha &&
      (!appId || s.app.id === Number(appId)) &&
      (!name || ctx.repo.checkRuns.some((r) => r.suite === s && r.name === name)),
  );
  return wrappedPage(ctx, 'check_suites', suites, (s) => checkSuiteJson(ctx.repo, s, ctx.urls));
};

// ---- commit statuses ---------------------------------------------------------------------------

function latestStatuses(statuses: CommitStatusState[]): CommitStatusState[] {
  const latest = new Map<string, CommitStatusState>();
  for (const s of statuses) latest.set(s.context.toLowerCase(), s);
  return [...latest.values()];
}

const createCommitStatus: RouteHandler = (ctx) => {
  const b = ctx.body as { state: CommitStatusState['state']; target_url?: string | null; description?: string | null; context?: string };
  const sha = ctx.params.sha!;
  if (!/^[0-9a-f]{40}$/i.test(sha)) return error(422, `No commit found for SHA: ${sha}`);
  const now = timestamp();
  const status: CommitStatusState = {
    id: ctx.gh.newId(),
    sha: sha.toLowerCase(),
    state: b.state,
    context: b.context ?? 'default',
    description: b.description ?? null,
    targetUrl: b.target_url ?? null,
    creator: actingAccount(ctx.identity),
    createdAt: now,
    updatedAt: now,
  };
  ctx.repo.commitStatuses.push(status);
  const json = commitStatusJson(ctx.repo, status, ctx.urls);
  return { status: 201, body: json, headers: { location: json.url } };
};

const combinedStatus: RouteHandler = (ctx) => {
  const sha = resolveRef(ctx.repo, ctx.params.ref!);
  if (!sha) return notFound();
  const latest = latestStatuses(ctx.repo.commitStatuses.filter((s) => s.sha === sha)).reverse();
  const p = paginate(latest, ctx.query, ctx.selfUrl);
  const repo = repositoryJson(ctx.repo, ctx.urls);
  return {
    status: 200,
    headers: p.link ? { link: p.link } : {},
    body: {
      state: combinedState(latest),
      statuses: p.items.map((s) => {
        const { creator: _, ...simple } = commitStatusJson(ctx.repo, s, ctx.urls);
        return { ...simple, required: false };
      }),
      sha,
      total_count: latest.length,
      repository: repo,
      commit_url: `${ctx.urls.api}/repos/${ctx.repo.fullName}/commits/${sha}`,
      url: `${ctx.urls.api}/repos/${ctx.repo.fullName}/commits/${sha}/status`,
    },
  };
};

// ---- apps --------------------------------------------------------------------------------------

const getRepoInstallation: RouteHandler = (ctx) => {
  if (ctx.identity.kind !== 'app') return error(401, 'A JSON web token could not be decoded');
  const app = ctx.identity.app;
  const fullName = `${ctx.params.owner}/${ctx.params.repo}`.toLowerCase();
  const installation = ctx.gh.allInstallations().find((i) => i.app === app && i.repositories.has(fullName));
  return installation ? { status: 200, body: installationJson(installation, ctx.urls) } : notFound();
};

const createInstallationToken: RouteHandler = (ctx) => {
  if (ctx.identity.kind !== 'app') return error(401, 'A JSON web token could not be decoded');
  const installation = ctx.gh.installation(Number(ctx.params.installation_id));
  if (!installation || installation.app !== ctx.identity.app) return notFound();
  const { token, expiresAt } = ctx.gh.issueInstallationToken(installation);
  return {
    status: 201,
    body: {
      token,
      expires_at: expiresAt,
      permissions: installationJson(installation, ctx.urls).permissions,
      repository_selection: 'selected',
    },
  };
};

const getAuthenticatedApp: RouteHandler = (ctx) => {
  if (ctx.identity.kind !== 'app') return error(401, 'A JSON web token could not be decoded');
  const app = ctx.identity.app;
  const installations = ctx.gh.allInstallations().filter((i) => i.app === app);
  return { status: 200, body: { ...appJson(app, ctx.urls), installations_count: installations.length } };
};

/** The user a token acts as; an App's or an installation's token is refused, as GitHub refuses it. */
const getAuthenticatedUser: RouteHandler = (ctx) =>
  ctx.identity.kind === 'user'
    ? { status: 200, body: authenticatedUserJson(ctx.identity.user, ctx.urls) }
    : error(403, 'Resource not accessible by integration');

/** The App's installations (authenticated as the App), oldest first as GitHub lists them. */
const listInstallations: RouteHandler = (ctx) => {
  if (ctx.identity.kind !== 'app') return error(401, 'A JSON web token could not be decoded');
  const app = ctx.identity.app;
  return page(
    ctx,
    ctx.gh.allInstallations().filter((i) => i.app === app),
    (i) => {
      const json = installationJson(i, ctx.urls);
      // This operation's description makes `account` allOf a Simple User and an Enterprise (the
      // installation schema elsewhere says anyOf): the account carries both shapes' fields.
      const enterprise = { name: i.account.login, slug: i.account.login.toLowerCase(), created_at: i.createdAt, updated_at: i.createdAt };
      return { ...json, account: { ...json.account, ...enterprise } };
    },
  );
};

/** The repositories an installation token can see (authenticated as the installation). */
const listInstallationRepositories: RouteHandler = (ctx) => {
  if (ctx.identity.kind !== 'installation') return error(403, 'You must authenticate with an installation access token.');
  const repositories = [...ctx.identity.installation.repositories].sort().map((fullName) => {
    const [owner = '', name = ''] = fullName.split('/');
    return ctx.gh.repository({ owner, name });
  });
  const reply = wrappedPage(ctx, 'repositories', repositories, (r) => repositoryJson(r, ctx.urls));
  return { ...reply, body: { ...(reply.body as object), repository_selection: 'selected' } };
};

const getRateLimit: RouteHandler = (ctx) => {
  const b = ctx.gh.rateLimits.bucket(identityKey(ctx.identity));
  const core = { limit: b.limit, used: b.used, remaining: ctx.gh.rateLimits.remaining(b), reset: b.reset };
  return { status: 200, body: { resources: { core, search: { limit: 30, used: 0, remaining: 30, reset: b.reset } }, rate: core } };
};

export const routes: Record<string, RouteHandler> = {
  'pulls/list': listPulls,
  'pulls/get': getPull,
  'issues/list-comments': listComments,
  'issues/create-comment': createComment,
  'issues/get-comment': getComment,
  'issues/update-comment': updateComment,
  'issues/delete-comment': deleteComment,
  'issues/remove-label': removeLabel,
  'repos/create-deployment': createDeployment,
  'repos/list-deployments': listDeployments,
  'repos/get-deployment': getDeployment,
  'repos/create-deployment-status': createDeploymentStatus,
  'repos/list-deployment-statuses': listDeploymentStatuses,
  'checks/create': createCheckRun,
  'checks/update': updateCheckRun,
  'checks/get': getCheckRun,
  'checks/list-for-ref': listCheckRunsForRef,
  'checks/list-suites-for-ref': listSuitesForRef,
  'repos/create-commit-status': createCommitStatus,
  'repos/get-combined-status-for-ref': combinedStatus,
  'apps/get-repo-installation': getRepoInstallation,
  'apps/create-installation-access-token': createInstallationToken,
  'apps/get-authenticated': getAuthenticatedApp,
  'apps/list-installations': listInstallations,
  'users/get-authenticated': getAuthenticatedUser,
  'apps/list-repos-accessible-to-installation': listInstallationRepositories,
  'rate-limit/get': getRateLimit,
  ...repositoryContentRoutes,
};
