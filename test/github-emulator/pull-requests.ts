// Test helpers that act on pull requests the way people do on GitHub: each action updates a
// real bare git repository (refs/pull/<n>/head, branches, merges), the emulator's PR state,
// and returns the signed `pull_request` webhook delivery GitHub would send for it.
import { randomBytes } from 'node:crypto';
import { createGitRepository, type FileChanges, type GitRepository } from '../support/git-repository.js';
import type { GitHubEmulator } from './emulator.js';
import { labelJson, pullRequestJson, repositoryJson, userJson } from './representations.js';
import { timestamp, type AuthorAssociation, type PullRequestState, type RepositoryRef } from './state.js';
import { createDelivery, webhookExample, type WebhookDelivery, type WebhookHook } from './webhook-delivery.js';

export interface PullRequestDriverOptions {
  owner?: string;
  name?: string;
  defaultBranch?: string;
  /** Files of the first commit on the default branch (default: a README). */
  initialFiles?: FileChanges;
  /** The webhook secret deliveries are signed with (default: random). */
  webhookSecret?: string;
  /**
   * The App whose webhook receives the deliveries: its installation id goes into every
   * payload and the hook headers name the App. Without it, deliveries come from a
   * repository webhook.
   */
  app?: { id: number; installationId: number };
}

export interface OpenInput {
  number?: number;
  files: FileChanges;
  author?: string;
  authorAssociation?: AuthorAssociation;
  /** Open the PR from a fork owned by this login. */
  fork?: string;
  draft?: boolean;
  labels?: string[];
  title?: string;
  body?: string;
  /** Base branch (default: the default branch). */
  base?: string;
  /** Head branch name (default: `feature-<n>`, or `patch-<n>` on a fork). */
  headBranch?: string;
  message?: string;
}

export interface PullRequestChange {
  /** The PR right after the change, as GitHub's REST API shows it (a snapshot). */
  pullRequest: ReturnType<typeof pullRequestJson>;
  delivery: WebhookDelivery;
}

export class PullRequestDriver {
  readonly repository: RepositoryRef;
  readonly hook: WebhookHook;

  private constructor(
    readonly gh: GitHubEmulator,
    readonly git: GitRepository,
    private readonly options: PullRequestDriverOptions,
  ) {
    this.repository = { owner: git.owner, name: git.repo };
    const repoId = gh.repository(this.repository).id;
    this.hook = {
      secret: options.webhookSecret ?? randomBytes(20).toString('hex'),
      id: gh.newId(),
      targetType: options.app ? 'integration' : 'repository',
      targetId: options.app ? options.app.id : repoId,
    };
  }

  /**
   * A repository both in the emulator and on disk (bare, served over file://); the emulator
   * serves its files (contents, blobs, commits, refs) from that git repository. Call
   * `cleanup()` when done. A fork gets no git data of its own: its pull requests' commits are
   * in this repository (refs/pull/<n>/head), where the operator reads them, as on GitHub.
   */
  static async create(gh: GitHubEmulator, options: PullRequestDriverOptions = {}): Promise<PullRequestDriver> {
    const git = await createGitRepository({
      owner: options.owner ?? 'acme',
      repo: options.name ?? `app-${randomBytes(3).toString('hex')}`,
      defaultBranch: options.defaultBranch ?? 'main',
      initialFiles: options.initialFiles ?? { 'README.md': '# preview test repository\n' },
    });
    const baseSha = await git.resolveRef(`refs/heads/${git.defaultBranch}`);
    gh.createRepository({ owner: git.owner, name: git.repo, defaultBranch: git.defaultBranch, defaultBranchSha: baseSha });
    gh.attachGitRepository({ owner: git.owner, name: git.repo }, git.originPath);
    return new PullRequestDriver(gh, git, options);
  }

  get cloneUrl(): string {
    return this.git.cloneUrl;
  }

  async cleanup(): Promise<void> {
    await this.gh.detachGitRepository(this.repository);
    await this.git.cleanup();
  }

  pullRequest(number: number): PullRequestState {
    return this.gh.pullRequest(this.repository, number);
  }

  async open(input: OpenInput): Promise<PullRequestChange> {
    const repo = this.gh.repository(this.repository);
    const number = input.number ?? repo.nextIssueNumber;
    const base = input.base ?? this.git.defaultBranch;
    const headRepository = input.fork ? this.gh.forkRepository(this.repository, input.fork) : this.repository;
    const headBranch = input.headBranch ?? (input.fork ? `patch-${number}` : `feature-${number}`);
    const sha = await this.git.openPullRequest(number, {
      base,
      // A fork's branch lives in the fork; the base repository only gets refs/pull/<n>/head.
      headBranch: input.fork ? undefined : headBranch,
      files: input.files,
      message: input.message,
    });
    const pr = this.gh.openPullRequest(this.repository, {
      number,
      title: input.title,
      body: input.body,
      author: input.author ?? input.fork ?? 'octocat',
      authorAssociation: input.authorAssociation,
      head: { ref: headBranch, sha, repository: headRepository },
      base: { ref: base, sha: await this.git.resolveRef(`refs/heads/${base}`) },
      draft: input.draft,
      labels: input.labels,
    });
    return this.change('opened', pr, pr.user.login);
  }

  /** A new commit on the PR's head: `synchronize`, with `before` and `after`. */
  async push(number: number, files: FileChanges, options: { message?: string; sender?: string } = {}): Promise<PullRequestChange> {
    const before = this.pullRequest(number).head.sha;
    const after = await this.git.pushToPullRequest(number, files, options.message);
    const pr = this.gh.updatePullRequest(this.repository, number, (p) => {
      p.head.sha = after;
      p.commits += 1;
      p.head.repo.branches.set(p.head.ref, after);
    });
    return this.change('synchronize', pr, options.sender ?? pr.user.login, { before, after });
  }

  label(number: number, name: string, options: { sender?: string } = {}): Promise<PullRequestChange> {
    const repo = this.gh.repository(this.repository);
    const label = this.gh.label(repo, name);
    const pr = this.gh.updatePullRequest(this.repository, number, (p) => {
      if (!p.labels.includes(label)) p.labels.push(label);
    });
    return Promise.resolve(this.change('labeled', pr, options.sender ?? 'maintainer', { label: labelJson(label, repo, this.gh.urls) }));
  }

  unlabel(number: number, name: string, options: { sender?: string } = {}): Promise<PullRequestChange> {
    const repo = this.gh.repository(this.repository);
    const label = this.gh.label(repo, name);
    const pr = this.gh.updatePullRequest(this.repository, number, (p) => {
      p.labels = p.labels.filter((l) => l !== label);
    });
    return Promise.resolve(this.change('unlabeled', pr, options.sender ?? 'maintainer', { label: labelJson(label, repo, this.gh.urls) }));
  }

  convertToDraft(number: number, options: { sender?: string } = {}): Promise<PullRequestChange> {
    const pr = this.gh.updatePullRequest(this.repository, number, (p) => {
      p.draft = true;
    });
    return Promise.resolve(this.change('converted_to_draft', pr, options.sender ?? pr.user.login));
  }

  readyForReview(number: number, options: { sender?: string } = {}): Promise<PullRequestChange> {
    const pr = this.gh.updatePullRequest(this.repository, number, (p) => {
      p.draft = false;
    });
    return Promise.resolve(this.change('ready_for_review', pr, options.sender ?? pr.user.login));
  }

  /** Retargets the PR to another base branch: `edited` with `changes.base`. */
  async changeBase(number: number, base: string, options: { sender?: string } = {}): Promise<PullRequestChange> {
    const baseSha = await this.git.resolveRef(`refs/heads/${base}`);
    if (!baseSha) throw new Error(`branch ${base} does not exist`);
    this.gh.setBranch(this.repository, base, baseSha);
    const previous = { ...this.pullRequest(number).base };
    const pr = this.gh.updatePullRequest(this.repository, number, (p) => {
      p.base = { ref: base, sha: baseSha };
    });
    return this.change('edited', pr, options.sender ?? pr.user.login, {
      changes: { base: { ref: { from: previous.ref }, sha: { from: previous.sha } } },
    });
  }

  /**
   * Closes the PR. `merged: true` merges it for real: the merge commit of head into base
   * becomes the base branch's tip, and the PR records it as `merge_commit_sha`.
   */
  async close(number: number, options: { merged?: boolean; sender?: string } = {}): Promise<PullRequestChange> {
    const current = this.pullRequest(number);
    let mergeSha: string | undefined;
    if (options.merged) {
      mergeSha = await this.git.updateMergeRef(number, current.base.ref);
      await this.git.setRef(`refs/heads/${current.base.ref}`, mergeSha);
      this.gh.setBranch(this.repository, current.base.ref, mergeSha);
    }
    const sender = options.sender ?? 'maintainer';
    const now = timestamp();
    const pr = this.gh.updatePullRequest(this.repository, number, (p) => {
      p.state = 'closed';
      p.closedAt = now;
      if (mergeSha) {
        p.merged = true;
        p.mergedAt = now;
        p.mergedBy = this.gh.account(sender);
        p.mergeCommitSha = mergeSha;
      }
    });
    return this.change('closed', pr, sender);
  }

  reopen(number: number, options: { sender?: string } = {}): Promise<PullRequestChange> {
    const pr = this.gh.updatePullRequest(this.repository, number, (p) => {
      if (p.merged) throw new Error(`PR #${number} is merged and cannot be reopened`);
      p.state = 'open';
      p.closedAt = null;
    });
    return Promise.resolve(this.change('reopened', pr, options.sender ?? pr.user.login));
  }

  /** The delivery GitHub would send for `action` on the PR as it is now. */
  delivery(action: string, number: number, sender: string, extra: Record<string, unknown> = {}): WebhookDelivery {
    const repo = this.gh.repository(this.repository);
    const pr = this.pullRequest(number);
    const urls = this.gh.urls;
    // Start from GitHub's published example of this action; every field that describes
    // the repository, the PR and the actors is then replaced by the emulator's state.
    const payload = webhookExample('pull_request', action);
    payload.action = action;
    payload.number = pr.number;
    payload.pull_request = { ...(payload.pull_request as object), ...pullRequestJson(repo, pr, urls) };
    payload.repository = { ...(payload.repository as object), ...repositoryJson(repo, urls) };
    payload.sender = userJson(this.gh.account(sender), urls);
    delete payload.enterprise;
    delete payload.organization;
    if (repo.owner.type === 'Organization') {
      const api = `${urls.api}/orgs/${repo.owner.login}`;
      payload.organization = {
        login: repo.owner.login,
        id: repo.owner.id,
        node_id: userJson(repo.owner, urls).node_id,
        url: api,
        repos_url: `${api}/repos`,
        events_url: `${api}/events`,
        hooks_url: `${api}/hooks`,
        issues_url: `${api}/issues`,
        members_url: `${api}/members{/member}`,
        public_members_url: `${api}/public_members{/member}`,
        avatar_url: userJson(repo.owner, urls).avatar_url,
        description: null,
      };
    }
    if (this.options.app)
      payload.installation = {
        id: this.options.app.installationId,
        node_id: Buffer.from(`Installation:${this.options.app.installationId}`).toString('base64'),
      };
    else delete payload.installation;
    delete payload.before;
    delete payload.after;
    delete payload.label;
    delete payload.changes;
    Object.assign(payload, extra);
    return createDelivery({
      event: 'pull_request',
      payload,
      hook: this.hook,
      contract: this.gh.contract,
      onProblems: (problems) => {
        for (const message of problems) {
          this.gh.recordViolation({
            kind: 'webhook',
            method: 'POST',
            path: `webhook pull_request.${action}`,
            operationId: undefined,
            message,
          });
        }
      },
    });
  }

  private change(action: string, pr: PullRequestState, sender: string, extra: Record<string, unknown> = {}): PullRequestChange {
    const repo = this.gh.repository(this.repository);
    return { pullRequest: pullRequestJson(repo, pr, this.gh.urls), delivery: this.delivery(action, pr.number, sender, extra) };
  }
}
