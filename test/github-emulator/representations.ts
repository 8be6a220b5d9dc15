// The JSON GitHub returns for each resource, built from the emulator's state. Every field
// the OpenAPI description requires is present; the contract check proves it on each response.
import type {
  Account,
  AppState,
  CheckRunState,
  CheckSuiteState,
  CommitStatusState,
  DeploymentState,
  DeploymentStatusState,
  InstallationState,
  IssueCommentState,
  LabelState,
  PullRequestState,
  RepositoryState,
} from './state.js';

/** Where the emulated GitHub lives: API base (`http://127.0.0.1:port`) and web base for html_url. */
export interface Urls {
  api: string;
  web: string;
}

/** GitHub's global node id: base64 of `<Kind>:<id>`. */
export const nodeId = (kind: string, id: number | string) => Buffer.from(`${kind}:${id}`).toString('base64');

export function userJson(u: Account, urls: Urls) {
  // Bots are `slug[bot]`: GitHub escapes the brackets in URLs (`/users/slug%5Bbot%5D`).
  const api = `${urls.api}/users/${encodeURIComponent(u.login)}`;
  return {
    login: u.login,
    id: u.id,
    node_id: nodeId(u.type, u.id),
    avatar_url: `${urls.web}/avatars/u/${u.id}`,
    gravatar_id: '',
    url: api,
    html_url:
      u.type === 'Bot'
        ? `${urls.web}/apps/${encodeURIComponent(u.login.replace(/\[bot\]$/, ''))}`
        : `${urls.web}/${encodeURIComponent(u.login)}`,
    followers_url: `${api}/followers`,
    following_url: `${api}/following{/other_user}`,
    gists_url: `${api}/gists{/gist_id}`,
    starred_url: `${api}/starred{/owner}{/repo}`,
    subscriptions_url: `${api}/subscriptions`,
    organizations_url: `${api}/orgs`,
    repos_url: `${api}/repos`,
    events_url: `${api}/events{/privacy}`,
    received_events_url: `${api}/received_events`,
    type: u.type,
    user_view_type: 'public',
    site_admin: false,
  };
}

/** GET /user: the account a user token acts as, as GitHub shows it to anyone (public-user). */
export function authenticatedUserJson(u: Account, urls: Urls) {
  const never = '2020-01-01T00:00:00Z';
  const profile = { name: u.login, company: null, blog: '', location: null, email: null, hireable: null, bio: null };
  return {
    ...userJson(u, urls),
    ...profile,
    public_repos: 0,
    public_gists: 0,
    followers: 0,
    following: 0,
    created_at: never,
    updated_at: never,
  };
}

export function appJson(app: AppState, urls: Urls) {
  return {
    id: app.id,
    slug: app.slug,
    node_id: nodeId('Integration', app.id),
    client_id: `Iv1.${app.id.toString(16).padStart(16, '0')}`,
    owner: userJson(app.owner, urls),
    name: app.name,
    description: null,
    external_url: `${urls.web}/apps/${app.slug}`,
    html_url: `${urls.web}/apps/${app.slug}`,
    created_at: app.createdAt,
    updated_at: app.createdAt,
    permissions: {
      checks: 'write',
      deployments: 'write',
      issues: 'write',
      metadata: 'read',
      pull_requests: 'write',
      statuses: 'write',
      contents: 'read',
    },
    events: ['pull_request', 'check_suite', 'check_run', 'status'],
  };
}

export function repositoryJson(r: RepositoryState, urls: Urls) {
  const api = `${urls.api}/repos/${r.fullName}`;
  const html = `${urls.web}/${r.fullName}`;
  const openIssues = [...r.pulls.values()].filter((p) => p.state === 'open').length;
  return {
    id: r.id,
    node_id: nodeId('Repository', r.id),
    name: r.name,
    full_name: r.fullName,
    owner: userJson(r.owner, urls),
    private: r.private,
    html_url: html,
    description: null,
    fork: r.parent !== null,
    url: api,
    archive_url: `${api}/{archive_format}{/ref}`,
    assignees_url: `${api}/assignees{/user}`,
    blobs_url: `${api}/git/blobs{/sha}`,
    branches_url: `${api}/branches{/branch}`,
    collaborators_url: `${api}/collaborators{/collaborator}`,
    comments_url: `${api}/comments{/number}`,
    commits_url: `${api}/commits{/sha}`,
    compare_url: `${api}/compare/{base}...{head}`,
    contents_url: `${api}/contents/{+path}`,
    contributors_url: `${api}/contributors`,
    deployments_url: `${api}/deployments`,
    downloads_url: `${api}/downloads`,
    events_url: `${api}/events`,
    forks_url: `${api}/forks`,
    git_commits_url: `${api}/git/commits{/sha}`,
    git_refs_url: `${api}/git/refs{/sha}`,
    git_tags_url: `${api}/git/tags{/sha}`,
    git_url: `git://${new URL(urls.web).host}/${r.fullName}.git`,
    issue_comment_url: `${api}/issues/comments{/number}`,
    issue_events_url: `${api}/issues/events{/number}`,
    issues_url: `${api}/issues{/number}`,
    keys_url: `${api}/keys{/key_id}`,
    labels_url: `${api}/labels{/name}`,
    languages_url: `${api}/languages`,
    merges_url: `${api}/merges`,
    milestones_url: `${api}/milestones{/number}`,
    notifications_url: `${api}/notifications{?since,all,participating}`,
    pulls_url: `${api}/pulls{/number}`,
    releases_url: `${api}/releases{/id}`,
    ssh_url: `git@${new URL(urls.web).host}:${r.fullName}.git`,
    stargazers_url: `${api}/stargazers`,
    statuses_url: `${api}/statuses/{sha}`,
    subscribers_url: `${api}/subscribers`,
    subscription_url: `${api}/subscription`,
    tags_url: `${api}/tags`,
    teams_url: `${api}/teams`,
    trees_url: `${api}/git/trees{/sha}`,
    clone_url: `${html}.git`,
    mirror_url: null,
    hooks_url: `${api}/hooks`,
    svn_url: html,
    homepage: null,
    language: 'TypeScript',
    forks_count: 0,
    forks: 0,
    stargazers_count: 0,
    watchers_count: 0,
    watchers: 0,
    size: 0,
    default_branch: r.defaultBranch,
    open_issues_count: openIssues,
    open_issues: openIssues,
    is_template: false,
    topics: [],
    has_issues: true,
    has_projects: false,
    has_wiki: false,
    has_pages: false,
    has_downloads: true,
    has_discussions: false,
    archived: false,
    disabled: false,
    visibility: r.private ? 'private' : 'public',
    pushed_at: r.pushedAt,
    created_at: r.createdAt,
    updated_at: r.pushedAt,
    allow_forking: true,
    web_commit_signoff_required: false,
    license: null,
  };
}

export function labelJson(l: LabelState, repo: RepositoryState, urls: Urls) {
  return {
    id: l.id,
    node_id: nodeId('Label', l.id),
    url: `${urls.api}/repos/${repo.fullName}/labels/${encodeURIComponent(l.name)}`,
    name: l.name,
    description: l.description,
    color: l.color,
    default: false,
  };
}

function pullLinks(repo: RepositoryState, p: PullRequestState, urls: Urls) {
  const api = `${urls.api}/repos/${repo.fullName}`;
  return {
    self: { href: `${api}/pulls/${p.number}` },
    html: { href: `${urls.web}/${repo.fullName}/pull/${p.number}` },
    issue: { href: `${api}/issues/${p.number}` },
    comments: { href: `${api}/issues/${p.number}/comments` },
    review_comments: { href: `${api}/pulls/${p.number}/comments` },
    review_comment: { href: `${api}/pulls/comments{/number}` },
    commits: { href: `${api}/pulls/${p.number}/commits` },
    statuses: { href: `${api}/statuses/${p.head.sha}` },
  };
}

/** `pull-request-simple`, the shape of each item of `GET /repos/{owner}/{repo}/pulls`. */
export function pullRequestSimpleJson(repo: RepositoryState, p: PullRequestState, urls: Urls) {
  const api = `${urls.api}/repos/${repo.fullName}`;
  return {
    url: `${api}/pulls/${p.number}`,
    id: p.id,
    node_id: nodeId('PullRequest', p.id),
    html_url: `${urls.web}/${repo.fullName}/pull/${p.number}`,
    diff_url: `${urls.web}/${repo.fullName}/pull/${p.number}.diff`,
    patch_url: `${urls.web}/${repo.fullName}/pull/${p.number}.patch`,
    issue_url: `${api}/issues/${p.number}`,
    commits_url: `${api}/pulls/${p.number}/commits`,
    review_comments_url: `${api}/pulls/${p.number}/comments`,
    review_comment_url: `${api}/pulls/comments{/number}`,
    comments_url: `${api}/issues/${p.number}/comments`,
    statuses_url: `${api}/statuses/${p.head.sha}`,
    number: p.number,
    state: p.state,
    locked: p.locked,
    title: p.title,
    user: userJson(p.user, urls),
    body: p.body,
    // `pull-request-simple` describes a label's description as a string (not nullable).
    labels: p.labels.map((l) => ({ ...labelJson(l, repo, urls), description: l.description ?? '' })),
    milestone: null,
    active_lock_reason: null,
    created_at: p.createdAt,
    updated_at: p.updatedAt,
    closed_at: p.closedAt,
    merged_at: p.mergedAt,
    merge_commit_sha: p.mergeCommitSha,
    assignee: null,
    assignees: [],
    requested_reviewers: [],
    requested_teams: [],
    head: {
      label: `${p.head.repo.owner.login}:${p.head.ref}`,
      ref: p.head.ref,
      sha: p.head.sha,
      user: userJson(p.head.repo.owner, urls),
      repo: repositoryJson(p.head.repo, urls),
    },
    base: {
      label: `${repo.owner.login}:${p.base.ref}`,
      ref: p.base.ref,
      sha: p.base.sha,
      user: userJson(repo.owner, urls),
      repo: repositoryJson(repo, urls),
    },
    _links: pullLinks(repo, p, urls),
    author_association: p.authorAssociation,
    auto_merge: null,
    draft: p.draft,
  };
}

/** `pull-request`, the shape of `GET /repos/{owner}/{repo}/pulls/{pull_number}` and of webhook payloads. */
export function pullRequestJson(repo: RepositoryState, p: PullRequestState, urls: Urls) {
  return {
    ...pullRequestSimpleJson(repo, p, urls),
    merged: p.merged,
    mergeable: p.state === 'open' ? true : null,
    rebaseable: p.state === 'open' ? true : null,
    mergeable_state: p.state === 'open' ? 'clean' : 'unknown',
    merged_by: p.mergedBy ? userJson(p.mergedBy, urls) : null,
    comments: repo.comments.filter((c) => c.issueNumber === p.number).length,
    review_comments: 0,
    maintainer_can_modify: p.head.repo !== repo,
    commits: p.commits,
    additions: p.commits,
    deletions: 0,
    changed_files: p.commits,
  };
}

export function issueCommentJson(repo: RepositoryState, c: IssueCommentState, urls: Urls) {
  const api = `${urls.api}/repos/${repo.fullName}`;
  return {
    id: c.id,
    node_id: nodeId('IssueComment', c.id),
    url: `${api}/issues/comments/${c.id}`,
    html_url: `${urls.web}/${repo.fullName}/pull/${c.issueNumber}#issuecomment-${c.id}`,
    body: c.body,
    user: userJson(c.user, urls),
    created_at: c.createdAt,
    updated_at: c.updatedAt,
    issue_url: `${api}/issues/${c.issueNumber}`,
    author_association: c.user.login === repo.owner.login ? 'OWNER' : 'NONE',
    performed_via_github_app: c.app ? appJson(c.app, urls) : null,
  };
}

export function deploymentJson(repo: RepositoryState, d: DeploymentState, urls: Urls) {
  const api = `${urls.api}/repos/${repo.fullName}`;
  return {
    url: `${api}/deployments/${d.id}`,
    id: d.id,
    node_id: nodeId('Deployment', d.id),
    sha: d.sha,
    ref: d.ref,
    task: d.task,
    payload: d.payload,
    original_environment: d.originalEnvironment,
    environment: d.environment,
    description: d.description,
    creator: userJson(d.creator, urls),
    created_at: d.createdAt,
    updated_at: d.updatedAt,
    statuses_url: `${api}/deployments/${d.id}/statuses`,
    repository_url: api,
    transient_environment: d.transientEnvironment,
    production_environment: d.productionEnvironment,
    performed_via_github_app: d.app ? appJson(d.app, urls) : null,
  };
}

export function deploymentStatusJson(repo: RepositoryState, d: DeploymentState, s: DeploymentStatusState, urls: Urls) {
  const api = `${urls.api}/repos/${repo.fullName}`;
  return {
    url: `${api}/deployments/${d.id}/statuses/${s.id}`,
    id: s.id,
    node_id: nodeId('DeploymentStatus', s.id),
    state: s.state,
    creator: userJson(s.creator, urls),
    description: s.description,
    environment: s.environment,
    target_url: s.targetUrl,
    created_at: s.createdAt,
    updated_at: s.createdAt,
    deployment_url: `${api}/deployments/${d.id}`,
    repository_url: api,
    environment_url: s.environmentUrl,
    log_url: s.logUrl,
    performed_via_github_app: s.app ? appJson(s.app, urls) : null,
  };
}

function suiteStatus(runs: CheckRunState[]): { status: 'queued' | 'in_progress' | 'completed'; conclusion: string | null } {
  if (runs.length === 0) return { status: 'queued', conclusion: null };
  if (runs.some((r) => r.status !== 'completed')) {
    return {
      status: runs.some((r) => r.status === 'in_progress' || r.status === 'completed') ? 'in_progress' : 'queued',
      conclusion: null,
    };
  }
  // GitHub's precedence: the worst conclusion of the suite's runs wins.
  const order = ['action_required', 'cancelled', 'timed_out', 'failure', 'stale', 'neutral', 'skipped', 'success'];
  const worst = runs.map((r) => r.conclusion ?? 'success').sort((a, b) => order.indexOf(a) - order.indexOf(b))[0]!;
  return { status: 'completed', conclusion: worst === 'skipped' ? 'success' : worst };
}

export function checkSuiteJson(repo: RepositoryState, s: CheckSuiteState, urls: Urls) {
  const api = `${urls.api}/repos/${repo.fullName}`;
  const runs = repo.checkRuns.filter((r) => r.suite === s);
  const { status, conclusion } = suiteStatus(runs);
  return {
    id: s.id,
    node_id: nodeId('CheckSuite', s.id),
    head_branch: s.headBranch,
    head_sha: s.headSha,
    status,
    conclusion,
    url: `${api}/check-suites/${s.id}`,
    before: null,
    after: s.headSha,
    pull_requests: [],
    app: appJson(s.app, urls),
    repository: repositoryJson(repo, urls),
    created_at: s.createdAt,
    updated_at: s.updatedAt,
    head_commit: {
      id: s.headSha,
      tree_id: s.headSha,
      message: 'commit',
      timestamp: s.createdAt,
      author: { name: 'emulator', email: 'emulator@example.com' },
      committer: { name: 'emulator', email: 'emulator@example.com' },
    },
    latest_check_runs_count: runs.length,
    check_runs_url: `${api}/check-suites/${s.id}/check-runs`,
    rerequestable: true,
    runs_rerequestable: true,
  };
}

export function checkRunJson(repo: RepositoryState, r: CheckRunState, urls: Urls) {
  const api = `${urls.api}/repos/${repo.fullName}`;
  return {
    id: r.id,
    head_sha: r.headSha,
    node_id: nodeId('CheckRun', r.id),
    external_id: r.externalId ?? '',
    url: `${api}/check-runs/${r.id}`,
    html_url: `${urls.web}/${repo.fullName}/runs/${r.id}`,
    details_url: r.detailsUrl ?? `${urls.web}/apps/${r.app.slug}`,
    status: r.status,
    conclusion: r.conclusion,
    started_at: r.startedAt,
    completed_at: r.completedAt,
    output: {
      title: r.output.title,
      summary: r.output.summary,
      text: r.output.text,
      annotations_count: 0,
      annotations_url: `${api}/check-runs/${r.id}/annotations`,
    },
    name: r.name,
    check_suite: { id: r.suite.id },
    app: appJson(r.app, urls),
    pull_requests: [],
  };
}

export function commitStatusJson(repo: RepositoryState, s: CommitStatusState, urls: Urls) {
  return {
    url: `${urls.api}/repos/${repo.fullName}/statuses/${s.sha}`,
    avatar_url: `${urls.web}/avatars/u/${s.creator.id}`,
    id: s.id,
    node_id: nodeId('StatusContext', s.id),
    state: s.state,
    description: s.description,
    target_url: s.targetUrl,
    context: s.context,
    created_at: s.createdAt,
    updated_at: s.updatedAt,
    creator: userJson(s.creator, urls),
  };
}

/** GitHub's rule: failure if any latest status is error/failure, pending if any is pending or none exist, else success. */
export function combinedState(latest: CommitStatusState[]): 'failure' | 'pending' | 'success' {
  if (latest.some((s) => s.state === 'error' || s.state === 'failure')) return 'failure';
  if (latest.length === 0 || latest.some((s) => s.state === 'pending')) return 'pending';
  return 'success';
}

export function installationJson(i: InstallationState, urls: Urls) {
  return {
    id: i.id,
    account: userJson(i.account, urls),
    repository_selection: 'selected',
    access_tokens_url: `${urls.api}/app/installations/${i.id}/access_tokens`,
    repositories_url: `${urls.api}/installation/repositories`,
    html_url: `${urls.web}/settings/installations/${i.id}`,
    app_id: i.app.id,
    client_id: `Iv1.${i.app.id.toString(16).padStart(16, '0')}`,
    target_id: i.account.id,
    target_type: i.account.type === 'Organization' ? 'Organization' : 'User',
    permissions: {
      checks: 'write',
      deployments: 'write',
      issues: 'write',
      metadata: 'read',
      pull_requests: 'write',
      statuses: 'write',
      contents: 'read',
    },
    events: ['pull_request', 'check_suite', 'check_run', 'status'],
    created_at: i.createdAt,
    updated_at: i.createdAt,
    single_file_name: null,
    has_multiple_single_files: false,
    single_file_paths: [],
    app_slug: i.app.slug,
    suspended_by: null,
    suspended_at: null,
    contact_email: null,
  };
}
