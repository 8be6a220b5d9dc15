// The GitHub emulator: an HTTP server on 127.0.0.1 that answers the REST endpoints the
// operator uses the way GitHub does (auth, rate-limit headers, ETags, pagination), checks
// every request and response against GitHub's OpenAPI description, and lets tests inject
// faults and inspect what was written.
import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { generateAppKeyPair, jwtIssuer, looksLikeJwt, verifyAppJwt } from './app-credentials.js';
import { FaultInjector, type Fault } from './faults.js';
import { GitObjectReader } from './git-objects.js';
import { githubContract, type OpenApiContract, type OpenApiOperation } from './openapi-contract.js';
import { RateLimits, type RateLimitOptions } from './rate-limits.js';
import type { Urls } from './representations.js';
import { routes, type Reply } from './routes.js';
import {
  identityKey,
  timestamp,
  type Account,
  type AppState,
  type AuthorAssociation,
  type CheckConclusion,
  type CheckRunState,
  type CheckStatus,
  type CommitStatusState,
  type CommitStatusValue,
  type DeploymentState,
  type Identity,
  type InstallationState,
  type IssueCommentState,
  type LabelState,
  type PullRequestState,
  type RepositoryRef,
  type RepositoryState,
} from './state.js';

export interface GitHubEmulatorOptions {
  rateLimit?: RateLimitOptions;
  /** Installation tokens' lifetime (GitHub: 1 hour). */
  installationTokenSeconds?: number;
  /**
   * Check every request and response against GitHub's OpenAPI description (default true). The
   * bench turns it off: it measures the operator, and GitHub does not validate its answers on
   * the operator's cores; the tests keep it on.
   */
  checkContract?: boolean;
}

export interface RequestRecord {
  seq: number;
  method: string;
  /** Path and query as received, a GHES `/api/v3` prefix removed. */
  path: string;
  /** `/api/v3` when the request came to the GitHub Enterprise Server path, else ''. */
  prefix: string;
  operationId: string | undefined;
  status: number;
  /** Epoch ms when the request arrived and when the answer was sent. */
  startedAt: number;
  finishedAt: number;
  /** `installation:12`, `user:octocat`, `app:3`, or undefined when unauthenticated. */
  identity: string | undefined;
  conditional: boolean;
  fault: Fault['kind'] | undefined;
  requestBody: unknown;
}

export type ViolationKind = 'request' | 'response' | 'rule' | 'unknown-endpoint' | 'unimplemented' | 'webhook';

export interface Violation {
  kind: ViolationKind;
  method: string;
  path: string;
  operationId: string | undefined;
  message: string;
  at: number;
}

export interface RouteContext {
  gh: GitHubEmulator;
  op: OpenApiOperation;
  params: Record<string, string>;
  query: URLSearchParams;
  /** The parsed JSON request body, already checked against the operation's schema. */
  body: unknown;
  identity: Identity;
  /** The repository of a `/repos/{owner}/{repo}/…` route, access already checked. */
  repo: RepositoryState;
  /** The Accept header (media types such as `application/vnd.github.sha`). */
  accept: string | undefined;
  urls: Urls;
  /** `http://127.0.0.1:port[/api/v3]` + the request's path, for Link headers. */
  selfUrl: string;
}

export interface OpenPullRequestInput {
  number?: number;
  title?: string;
  body?: string | null;
  author: string;
  authorAssociation?: AuthorAssociation;
  head: { ref: string; sha: string; repository?: RepositoryRef };
  base?: { ref?: string; sha?: string };
  draft?: boolean;
  labels?: string[];
  commits?: number;
}

type TokenRecord = { kind: 'installation'; installation: InstallationState; expiresAt: number } | { kind: 'user'; user: Account };

const jwtOnlyOperations = new Set([
  'apps/get-authenticated',
  'apps/create-installation-access-token',
  'apps/get-repo-installation',
  'apps/get-installation',
  'apps/list-installations',
  'apps/get-org-installation',
  'apps/get-user-installation',
]);

/** A 403 rate limit in an older GitHub Enterprise Server's words: it does not say "secondary rate limit". */
const abuseDetectionMessage = 'You have triggered an abuse detection mechanism. Please wait a few minutes before you try again.';

const secondaryRateLimitMessage =
  'You have exceeded a secondary rate limit. Please wait a few minutes before you try again. If you reach out to GitHub Support for help, please include the request ID';

export class GitHubEmulator {
  readonly requests: RequestRecord[] = [];
  readonly violations: Violation[] = [];
  readonly faults = new FaultInjector();
  readonly rateLimits: RateLimits;
  readonly contract: OpenApiContract;
  readonly urls: Urls;

  private readonly accounts = new Map<string, Account>();
  private readonly repos = new Map<string, RepositoryState>();
  private readonly apps = new Map<number, AppState>();
  private readonly installations = new Map<number, InstallationState>();
  private readonly tokens = new Map<string, TokenRecord>();
  /** Readers of the repositories' git data, by lower-case full name. */
  private readonly gitReaders = new Map<string, GitObjectReader>();
  private lastId = 1000;
  private seq = 0;

  private constructor(
    private readonly server: Server,
    url: string,
    private readonly options: GitHubEmulatorOptions,
  ) {
    this.urls = { api: url, web: `${url}/web` };
    this.rateLimits = new RateLimits(options.rateLimit);
    this.contract = githubContract();
  }

  /** Starts an emulator on 127.0.0.1 with a free port. */
  static async start(options: GitHubEmulatorOptions = {}): Promise<GitHubEmulator> {
    const server = createServer();
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    const gh = new GitHubEmulator(server, `http://127.0.0.1:${port}`, options);
    server.on('request', (req, res) => void gh.handle(req, res));
    return gh;
  }

  get url(): string {
    return this.urls.api;
  }

  async close(): Promise<void> {
    // The server first: a request still in flight must not find its git reader closed.
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
    const readers = [...this.gitReaders.values()];
    this.gitReaders.clear();
    await Promise.all(readers.map((reader) => reader.close()));
  }

  newId(): number {
    this.lastId += 1;
    return this.lastId;
  }

  // ---- setup -------------------------------------------------------------------------------

  account(login: string, type: Account['type'] = 'User'): Account {
    const key = login.toLowerCase();
    let a = this.accounts.get(key);
    if (!a) {
      a = { login, id: this.newId(), type };
      this.accounts.set(key, a);
    }
    return a;
  }

  /** Adds a repository; returns its reference (the state is `repository(ref)`). */
  createRepository(
    input: RepositoryRef & { defaultBranch?: string; ownerType?: 'User' | 'Organization'; private?: boolean; defaultBranchSha?: string },
  ): RepositoryRef {
    this.addRepository(input);
    return { owner: input.owner, name: input.name };
  }

  private addRepository(
    input: RepositoryRef & { defaultBranch?: string; ownerType?: 'User' | 'Organization'; private?: boolean; defaultBranchSha?: string },
  ): RepositoryState {
    const fullName = `${input.owner}/${input.name}`;
    if (this.repos.has(fullName.toLowerCase())) throw new Error(`repository ${fullName} exists already`);
    const now = timestamp();
    const repo: RepositoryState = {
      id: this.newId(),
      owner: this.account(input.owner, input.ownerType ?? 'Organization'),
      name: input.name,
      fullName,
      defaultBranch: input.defaultBranch ?? 'main',
      private: input.private ?? false,
      parent: null,
      createdAt: now,
      pushedAt: now,
      labels: new Map(),
      pulls: new Map(),
      nextIssueNumber: 1,
      comments: [],
      deployments: [],
      checkSuites: [],
      checkRuns: [],
      commitStatuses: [],
      branches: new Map(),
    };
    if (input.defaultBranchSha) repo.branches.set(repo.defaultBranch, input.defaultBranchSha);
    this.repos.set(fullName.toLowerCase(), repo);
    return repo;
  }

  /** A fork of `source` owned by `owner` (a user account unless it exists as an organization). */
  forkRepository(source: RepositoryRef, owner: string): RepositoryRef {
    const parent = this.repository(source);
    const ref = { owner, name: parent.name };
    if (!this.repos.has(`${owner}/${parent.name}`.toLowerCase())) {
      this.addRepository({ ...ref, defaultBranch: parent.defaultBranch, ownerType: 'User' }).parent = parent;
    }
    return ref;
  }

  /**
   * Serves the repository's files (contents, blobs, commits, refs) from a real git repository
   * (bare or not), as GitHub serves them from its own. Replaces an earlier one.
   */
  attachGitRepository(ref: RepositoryRef, gitDir: string): void {
    const key = this.repository(ref).fullName.toLowerCase();
    void this.gitReaders.get(key)?.close();
    this.gitReaders.set(key, new GitObjectReader(gitDir));
  }

  /** Stops serving the repository's git data (before its directory is removed). */
  async detachGitRepository(ref: RepositoryRef): Promise<void> {
    const key = `${ref.owner}/${ref.name}`.toLowerCase();
    const reader = this.gitReaders.get(key);
    this.gitReaders.delete(key);
    await reader?.close();
  }

  /** The reader of a repository's git data, if one is attached. */
  gitObjects(repo: RepositoryState): GitObjectReader | undefined {
    return this.gitReaders.get(repo.fullName.toLowerCase());
  }

  repository(ref: RepositoryRef): RepositoryState {
    const repo = this.repos.get(`${ref.owner}/${ref.name}`.toLowerCase());
    if (!repo) throw new Error(`no repository ${ref.owner}/${ref.name} in the emulator`);
    return repo;
  }

  /** A GitHub App; its private key (PKCS#1 PEM) is what the operator is configured with. */
  createApp(input: { slug?: string; name?: string; owner?: string } = {}): {
    id: number;
    slug: string;
    privateKey: string;
    state: AppState;
  } {
    const { privateKeyPem, publicKey } = generateAppKeyPair();
    const id = this.newId();
    const slug = input.slug ?? `preview-operator-${id}`;
    const app: AppState = {
      id,
      slug,
      name: input.name ?? slug,
      owner: this.account(input.owner ?? 'app-owner', 'Organization'),
      bot: this.account(`${slug}[bot]`, 'Bot'),
      publicKey,
      createdAt: timestamp(),
    };
    this.apps.set(id, app);
    return { id, slug, privateKey: privateKeyPem, state: app };
  }

  /** Installs an App on an account for the given repositories; returns the installation id. */
  installApp(appId: number, repositories: RepositoryRef[]): number {
    const app = this.apps.get(appId);
    if (!app) throw new Error(`no App ${appId}`);
    const repos = repositories.map((r) => this.repository(r));
    const account = repos[0]?.owner ?? app.owner;
    const existing = [...this.installations.values()].find((i) => i.app === app && i.account === account);
    if (existing) {
      for (const r of repos) existing.repositories.add(r.fullName.toLowerCase());
      return existing.id;
    }
    const installation: InstallationState = {
      id: this.newId(),
      app,
      account,
      repositories: new Set(repos.map((r) => r.fullName.toLowerCase())),
      createdAt: timestamp(),
    };
    this.installations.set(installation.id, installation);
    return installation.id;
  }

  installation(id: number): InstallationState | undefined {
    return this.installations.get(id);
  }

  allInstallations(): InstallationState[] {
    return [...this.installations.values()];
  }

  app(id: number): AppState | undefined {
    return this.apps.get(id);
  }

  /** A personal access token (classic) for a user with access to every repository. */
  createToken(login: string): string {
    const token = `ghp_${randomBytes(18).toString('hex')}`;
    this.tokens.set(token, { kind: 'user', user: this.account(login, 'User') });
    return token;
  }

  issueInstallationToken(installation: InstallationState): { token: string; expiresAt: string } {
    const token = `ghs_${randomBytes(18).toString('hex')}`;
    const expiresAt = Date.now() + (this.options.installationTokenSeconds ?? 3600) * 1000;
    this.tokens.set(token, { kind: 'installation', installation, expiresAt });
    return { token, expiresAt: timestamp(new Date(expiresAt)) };
  }

  /** Forces the primary rate limit of a credential (`installation:<id>`, `user:<login>`, `app:<id>`). */
  setRateLimit(identity: string, values: { remaining?: number; limit?: number; resetInSeconds?: number }): void {
    this.rateLimits.set(identity, values);
  }

  // ---- pull requests and refs (the PR helpers drive these) ---------------------------------

  setBranch(ref: RepositoryRef, branch: string, sha: string): void {
    const repo = this.repository(ref);
    repo.branches.set(branch, sha);
    repo.pushedAt = timestamp();
  }

  label(repo: RepositoryState, name: string): LabelState {
    let l = repo.labels.get(name.toLowerCase());
    if (!l) {
      l = { id: this.newId(), name, color: createHash('sha1').update(name).digest('hex').slice(0, 6), description: null };
      repo.labels.set(name.toLowerCase(), l);
    }
    return l;
  }

  openPullRequest(ref: RepositoryRef, input: OpenPullRequestInput): PullRequestState {
    const repo = this.repository(ref);
    const number = input.number ?? repo.nextIssueNumber;
    if (repo.pulls.has(number)) throw new Error(`pull request #${number} exists already in ${repo.fullName}`);
    repo.nextIssueNumber = Math.max(repo.nextIssueNumber, number + 1);
    const headRepo = input.head.repository ? this.repository(input.head.repository) : repo;
    const baseRef = input.base?.ref ?? repo.defaultBranch;
    const now = timestamp();
    const pr: PullRequestState = {
      id: this.newId(),
      number,
      title: input.title ?? `Pull request ${number}`,
      body: input.body ?? null,
      state: 'open',
      locked: false,
      draft: input.draft ?? false,
      user: this.account(input.author),
      authorAssociation: input.authorAssociation ?? (headRepo === repo ? 'MEMBER' : 'CONTRIBUTOR'),
      labels: (input.labels ?? []).map((l) => this.label(repo, l)),
      head: { ref: input.head.ref, sha: input.head.sha, repo: headRepo },
      base: { ref: baseRef, sha: input.base?.sha ?? repo.branches.get(baseRef) ?? '0'.repeat(40) },
      merged: false,
      mergedAt: null,
      mergedBy: null,
      mergeCommitSha: null,
      closedAt: null,
      createdAt: now,
      updatedAt: now,
      commits: input.commits ?? 1,
    };
    repo.pulls.set(number, pr);
    headRepo.branches.set(input.head.ref, input.head.sha);
    return pr;
  }

  pullRequest(ref: RepositoryRef, number: number): PullRequestState {
    const pr = this.repository(ref).pulls.get(number);
    if (!pr) throw new Error(`no pull request #${number} in ${ref.owner}/${ref.name}`);
    return pr;
  }

  /** Applies a change to a pull request and bumps `updated_at` (which changes list ETags). */
  updatePullRequest(ref: RepositoryRef, number: number, change: (pr: PullRequestState, repo: RepositoryState) => void): PullRequestState {
    const repo = this.repository(ref);
    const pr = this.pullRequest(ref, number);
    change(pr, repo);
    pr.updatedAt = timestamp();
    return pr;
  }

  // ---- what CI does on a commit (for wait-for-checks) --------------------------------------

  /** A check run by another App (default slug `ci`), as a CI system would create it. */
  addCheckRun(
    ref: RepositoryRef,
    input: { headSha: string; name: string; status?: CheckStatus; conclusion?: CheckConclusion; appSlug?: string },
  ): CheckRunState {
    const repo = this.repository(ref);
    const slug = input.appSlug ?? 'ci';
    const app = [...this.apps.values()].find((a) => a.slug === slug) ?? this.createApp({ slug }).state;
    return this.createCheckRun(repo, app, {
      head_sha: input.headSha,
      name: input.name,
      status: input.status ?? (input.conclusion ? 'completed' : 'queued'),
      conclusion: input.conclusion,
    });
  }

  addCommitStatus(
    ref: RepositoryRef,
    input: { sha: string; context: string; state: CommitStatusValue; description?: string; creator?: string },
  ): CommitStatusState {
    const repo = this.repository(ref);
    const now = timestamp();
    const status: CommitStatusState = {
      id: this.newId(),
      sha: input.sha,
      state: input.state,
      context: input.context,
      description: input.description ?? null,
      targetUrl: null,
      creator: this.account(input.creator ?? 'ci-bot'),
      createdAt: now,
      updatedAt: now,
    };
    repo.commitStatuses.push(status);
    return status;
  }

  createCheckRun(
    repo: RepositoryState,
    app: AppState,
    body: {
      head_sha: string;
      name: string;
      status?: CheckStatus;
      conclusion?: CheckConclusion | undefined;
      details_url?: string;
      external_id?: string;
      started_at?: string;
      completed_at?: string;
      output?: { title?: string; summary?: string; text?: string };
    },
  ): CheckRunState {
    let suite = repo.checkSuites.find((s) => s.app === app && s.headSha === body.head_sha);
    const now = timestamp();
    if (!suite) {
      const branch = [...repo.branches.entries()].find(([, sha]) => sha === body.head_sha)?.[0] ?? null;
      suite = { id: this.newId(), headSha: body.head_sha, headBranch: branch, app, createdAt: now, updatedAt: now };
      repo.checkSuites.push(suite);
    }
    suite.updatedAt = now;
    const completed = body.conclusion !== undefined || body.status === 'completed';
    const run: CheckRunState = {
      id: this.newId(),
      suite,
      headSha: body.head_sha,
      name: body.name,
      status: completed ? 'completed' : (body.status ?? 'queued'),
      conclusion: body.conclusion ?? null,
      startedAt: body.started_at ?? now,
      completedAt: completed ? (body.completed_at ?? now) : null,
      detailsUrl: body.details_url ?? null,
      externalId: body.external_id ?? null,
      output: { title: body.output?.title ?? null, summary: body.output?.summary ?? null, text: body.output?.text ?? null },
      app,
    };
    repo.checkRuns.push(run);
    return run;
  }

  // ---- inspection --------------------------------------------------------------------------

  comments(ref: RepositoryRef, number: number): IssueCommentState[] {
    return this.repository(ref).comments.filter((c) => c.issueNumber === number);
  }

  deployments(ref: RepositoryRef, filter: { environment?: string; sha?: string } = {}): DeploymentState[] {
    return this.repository(ref).deployments.filter(
      (d) =>
        (filter.environment === undefined || d.environment === filter.environment) && (filter.sha === undefined || d.sha === filter.sha),
    );
  }

  checkRuns(ref: RepositoryRef, filter: { headSha?: string; name?: string } = {}): CheckRunState[] {
    return this.repository(ref).checkRuns.filter(
      (r) => (filter.headSha === undefined || r.headSha === filter.headSha) && (filter.name === undefined || r.name === filter.name),
    );
  }

  commitStatuses(ref: RepositoryRef, sha?: string): CommitStatusState[] {
    return this.repository(ref).commitStatuses.filter((s) => sha === undefined || s.sha === sha);
  }

  /** A position in the request log: requests that arrive after it are `requestsSince` it. */
  mark(): number {
    return this.seq;
  }

  /**
   * The requests that arrived after `mark` and were answered, in arrival order; optionally
   * only one operation, method, or repository (`/repos/{owner}/{name}/…`, for tests that
   * run side by side).
   */
  requestsSince(mark: number, filter: { operationId?: string; method?: string; repository?: RepositoryRef } = {}): RequestRecord[] {
    const prefix = filter.repository && `/repos/${filter.repository.owner}/${filter.repository.name}/`.toLowerCase();
    return this.requests
      .filter(
        (r) =>
          r.seq > mark &&
          (filter.operationId === undefined || r.operationId === filter.operationId) &&
          (filter.method === undefined || r.method === filter.method) &&
          (prefix === undefined || r.path.toLowerCase().startsWith(prefix)),
      )
      .sort((x, y) => x.seq - y.seq);
  }

  /** Fails loudly with every violation recorded (and forgets them); tests call it after each case. */
  assertNoViolations(): void {
    const found = this.takeViolations();
    if (found.length === 0) return;
    const lines = found.map((v) => `  [${v.kind}] ${v.method} ${v.path}${v.operationId ? ` (${v.operationId})` : ''}: ${v.message}`);
    throw new Error(`the GitHub emulator recorded ${found.length} violation(s) of GitHub's API description or rules:\n${lines.join('\n')}`);
  }

  /** Returns the violations recorded so far and forgets them (for tests that provoke one on purpose). */
  takeViolations(): Violation[] {
    return this.violations.splice(0, this.violations.length);
  }

  recordViolation(v: Omit<Violation, 'at'>): void {
    this.violations.push({ ...v, at: Date.now() });
  }

  // ---- HTTP --------------------------------------------------------------------------------

  private authenticate(header: string | undefined, operationId: string): { identity?: Identity; error?: string } {
    if (!header) return { error: 'Requires authentication' };
    const m = /^(token|bearer)\s+(\S+)$/i.exec(header.trim());
    if (!m) return { error: 'Bad credentials' };
    const credential = m[2]!;
    if (looksLikeJwt(credential)) {
      const app = this.apps.get(Number(jwtIssuer(credential)));
      if (!app) return { error: 'A JSON web token could not be decoded' };
      const problem = verifyAppJwt(credential, app.publicKey, app.id);
      if (problem) return { error: problem };
      if (!jwtOnlyOperations.has(operationId)) {
        return { error: 'A JSON web token authenticates only as the App; this endpoint needs an installation access token' };
      }
      return { identity: { kind: 'app', app } };
    }
    const record = this.tokens.get(credential);
    if (!record) return { error: 'Bad credentials' };
    if (record.kind === 'installation') {
      if (record.expiresAt <= Date.now()) return { error: 'Bad credentials' };
      return { identity: { kind: 'installation', installation: record.installation, token: credential } };
    }
    return { identity: { kind: 'user', user: record.user, token: credential } };
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const startedAt = Date.now();
    const method = (req.method ?? 'GET').toUpperCase();
    const url = new URL(req.url ?? '/', this.url);
    const prefix = url.pathname.startsWith('/api/v3/') ? '/api/v3' : '';
    const path = url.pathname.slice(prefix.length);
    const displayPath = `${path}${url.search}`;
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const raw = Buffer.concat(chunks).toString('utf8');

    const record: RequestRecord = {
      seq: ++this.seq,
      method,
      path: displayPath,
      prefix,
      operationId: undefined,
      status: 0,
      startedAt,
      finishedAt: 0,
      identity: undefined,
      conditional: req.headers['if-none-match'] !== undefined,
      fault: undefined,
      requestBody: undefined,
    };
    const headers: Record<string, string> = {
      'x-github-request-id': randomUUID().toUpperCase().slice(0, 23),
      'x-github-media-type': 'github.v3; format=json',
      'x-github-api-version-selected': '2022-11-28',
    };
    const send = (status: number, body: unknown, extra: Record<string, string> = {}, mediaType?: string) => {
      record.status = status;
      record.finishedAt = Date.now();
      this.requests.push(record);
      // A media type other than JSON (e.g. the bare SHA of application/vnd.github.sha) is sent as text.
      const payload = body === undefined ? '' : mediaType ? String(body) : JSON.stringify(body);
      if (payload) headers['content-type'] = `${mediaType ?? 'application/json'}; charset=utf-8`;
      res.writeHead(status, { ...headers, ...extra });
      res.end(payload);
    };
    const violate = (kind: ViolationKind, message: string) =>
      this.recordViolation({ kind, method, path: displayPath, operationId: record.operationId, message });

    const matched = this.contract.match(method, path);
    if (!matched.operation) {
      violate('unknown-endpoint', matched.pathExists ? `GitHub has no ${method} on this path` : 'GitHub has no such endpoint');
      send(404, { message: 'Not Found', documentation_url: 'https://docs.github.com/rest', status: '404' });
      return;
    }
    const { operation: op, pathParams } = matched;
    record.operationId = op.operationId;

    let body: unknown;
    if (raw.length > 0) {
      try {
        body = JSON.parse(raw);
        record.requestBody = body;
      } catch {
        violate('request', 'request body is not JSON');
        send(400, { message: 'Problems parsing JSON', documentation_url: 'https://docs.github.com/rest', status: '400' });
        return;
      }
    }
    const problems =
      this.options.checkContract === false
        ? []
        : this.contract.checkRequest(op, { pathParams, query: url.searchParams, body, contentType: req.headers['content-type'] });
    for (const p of problems) violate('request', p);

    const auth = this.authenticate(req.headers.authorization, op.operationId);
    const key = auth.identity ? identityKey(auth.identity) : `anonymous:${req.socket.remoteAddress}`;
    record.identity = auth.identity ? key : undefined;
    const broken = this.rateLimits.ruleBroken(key, startedAt);
    if (broken) violate('rule', broken);
    if (this.rateLimits.enter(key) > 100) violate('rule', 'more than 100 concurrent requests from one credential (GitHub secondary limit)');
    try {
      const fault = this.faults.take(op.operationId, method, op.path, pathParams);
      if (fault?.kind === 'delay') {
        record.fault = 'delay';
        await new Promise((r) => setTimeout(r, fault.ms));
      }
      const bucket = this.rateLimits.bucket(key);
      const rateHeaders = () => this.rateLimits.headers(bucket);

      if (fault && fault.kind !== 'delay' && fault.kind !== 'lost-answer') {
        record.fault = fault.kind;
        this.rateLimits.consume(key);
        if (fault.kind === 'server-error') {
          const status = fault.status ?? 500;
          send(
            status,
            {
              message: status === 502 ? 'Server Error' : 'Internal Server Error',
              documentation_url: 'https://docs.github.com/rest',
              status: String(status),
            },
            rateHeaders(),
          );
        } else {
          const status = fault.status ?? (fault.kind === 'too-many-requests' ? 429 : 403);
          const extra: Record<string, string> = { ...rateHeaders() };
          if (fault.retryAfterSeconds !== undefined) {
            extra['retry-after'] = String(fault.retryAfterSeconds);
            this.rateLimits.block(key, Date.now() + fault.retryAfterSeconds * 1000, `retry-after: ${fault.retryAfterSeconds}`);
          } else if (fault.kind === 'secondary-rate-limit') {
            // GitHub's rule without retry-after: wait at least one minute.
            this.rateLimits.block(key, Date.now() + 60_000, 'secondary rate limit without retry-after (wait at least 60 s)');
          }
          const message =
            fault.kind === 'secondary-rate-limit'
              ? `${secondaryRateLimitMessage} ${headers['x-github-request-id']}.`
              : status === 429
                ? 'Too Many Requests'
                : abuseDetectionMessage;
          const errBody = {
            message,
            documentation_url: 'https://docs.github.com/rest/overview/rate-limits-for-the-rest-api#about-secondary-rate-limits',
            status: String(status),
          };
          this.checkResponse(op, status, errBody, violate);
          send(status, errBody, extra);
        }
        return;
      }

      if (auth.error || !auth.identity) {
        send(401, { message: auth.error ?? 'Requires authentication', documentation_url: 'https://docs.github.com/rest', status: '401' });
        return;
      }
      const identity = auth.identity;
      if (op.operationId !== 'rate-limit/get' && this.rateLimits.remaining(bucket) === 0) {
        const exhausted = {
          message: `API rate limit exceeded for ${key}.`,
          documentation_url: 'https://docs.github.com/rest/overview/rate-limits-for-the-rest-api',
          status: '403',
        };
        send(403, exhausted, rateHeaders());
        return;
      }
      if (problems.some((p) => p.startsWith('request body') || p.includes('is required') || p.includes('takes no request body'))) {
        const invalid = { message: 'Invalid request.', documentation_url: 'https://docs.github.com/rest', status: '422', errors: problems };
        this.rateLimits.consume(key);
        send(422, invalid, rateHeaders());
        return;
      }

      const route = routes[op.operationId];
      if (!route) {
        violate('unimplemented', `the emulator does not implement ${op.operationId}`);
        send(404, { message: 'Not Found', documentation_url: 'https://docs.github.com/rest', status: '404' });
        return;
      }
      let repo: RepositoryState | undefined;
      if (pathParams.owner !== undefined && pathParams.repo !== undefined && op.path.startsWith('/repos/')) {
        repo = this.repos.get(`${pathParams.owner}/${pathParams.repo}`.toLowerCase());
        const visible = repo && (identity.kind !== 'installation' || identity.installation.repositories.has(repo.fullName.toLowerCase()));
        if (!visible && op.operationId !== 'apps/get-repo-installation') {
          this.rateLimits.consume(key);
          send(404, { message: 'Not Found', documentation_url: 'https://docs.github.com/rest', status: '404' }, rateHeaders());
          return;
        }
      }
      const reply: Reply = await route({
        gh: this,
        op,
        params: pathParams,
        query: url.searchParams,
        body,
        identity,
        repo: repo!,
        urls: this.urls,
        selfUrl: `${this.url}${prefix}${path}`,
        accept: req.headers.accept,
      });

      const replyBody = reply.body;
      const extra: Record<string, string> = { ...reply.headers };
      if (method === 'GET' && reply.status === 200) {
        const etag = `W/"${createHash('sha256').update(JSON.stringify(replyBody)).digest('hex')}"`;
        extra.etag = etag;
        const ifNoneMatch = req.headers['if-none-match'];
        if (
          ifNoneMatch &&
          ifNoneMatch
            .split(',')
            .map((s) => s.trim())
            .some((t) => t === etag || t === '*')
        ) {
          // Conditional requests answered 304 cost nothing.
          delete extra.link;
          send(304, undefined, { ...rateHeaders(), etag });
          return;
        }
      }
      if (op.operationId !== 'rate-limit/get') this.rateLimits.consume(key);
      if (this.rateLimits.remaining(bucket) === 0) this.rateLimits.block(key, bucket.reset * 1000, 'x-ratelimit-remaining: 0');
      this.checkResponse(op, reply.status, replyBody, violate, reply.mediaType);
      if (fault?.kind === 'lost-answer') {
        // Performed, and GitHub's answer lost: the client sees only a proxy's error page.
        record.fault = 'lost-answer';
        const status = fault.status ?? 502;
        const title = status === 502 ? '502 Bad Gateway' : '504 Gateway Time-out';
        send(status, `<html><head><title>${title}</title></head><body><h1>${title}</h1></body></html>`, {}, 'text/html');
        return;
      }
      send(reply.status, replyBody, { ...rateHeaders(), ...extra }, reply.mediaType);
    } catch (err) {
      violate('unimplemented', `the emulator failed: ${(err as Error).stack ?? String(err)}`);
      send(500, { message: 'emulator failure', documentation_url: 'https://docs.github.com/rest', status: '500' });
    } finally {
      this.rateLimits.leave(key);
    }
  }

  private checkResponse(
    op: OpenApiOperation,
    status: number,
    body: unknown,
    violate: (kind: ViolationKind, message: string) => void,
    mediaType?: string,
  ): void {
    if (this.options.checkContract === false) return;
    for (const p of this.contract.checkResponse(op, status, body, mediaType)) violate('response', p);
  }
}

export type {
  Account,
  AppState,
  CheckRunState,
  CommitStatusState,
  DeploymentState,
  InstallationState,
  IssueCommentState,
  PullRequestState,
  RepositoryRef,
  RepositoryState,
};
