// Scenarios 2, 3, 4, 5 and 8 against the operator running as its own process (bench/operator-
// entry.ts: the `run` configuration and startOperator). Stage times come from outside the
// operator: the bench sends each delivery, watches PreviewEnvironments (written, Ready),
// Algorithms and Databases (applied: every custom resource of the environment exists; they are
// applied last), Namespaces (gone), and reads the emulator's state (the comment says ready).
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync, readFileSync } from 'node:fs';
import { Agent, request } from 'node:http';
import { createServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import type { PreviewFileSource } from '../src/git/preview-files.js';
import { RepositoryCache } from '../src/git/repository-cache.js';
import { createGitHubClients } from '../src/github/octokit-factory.js';
import { GitHubPreviewFiles } from '../src/github/preview-files-api.js';
import { configPath, mainPath } from '../src/controllers/preview-environment-rendering.js';
import { Informer } from '../src/kube/informer.js';
import type { KubeObject } from '../src/kube/kube-object.js';
import { silentLogger } from '../src/kube/logger.js';
import { PullRequestDriver } from '../test/github-emulator/pull-requests.js';
import type { WebhookDelivery } from '../test/github-emulator/webhook-delivery.js';
import type { AuditEvent } from '../test/cluster/audit-log.js';
import { recordApiServerProfile, summarizeApiServerProfile } from './apiserver-profile.js';
import type { BenchEnvironment } from './bench-environment.js';
import { benchDomain, benchPreviewYaml } from './bench-preview.js';
import { imageRuntime } from './image-runtime.js';
import { benchBuildDir, repositoryRoot, startBenchChild, type JsonLineChild } from './child-process.js';
import { activityNote, burstActivityFigures, idleActivityFigures } from './controller-activity.js';
import { summarizeCpuProfile, type CpuProfile } from './cpu-profile-summary.js';
import type { Figure, ScenarioResult } from './figures.js';
import { memoryBreakdown, memoryFigures, memoryNote } from './operator-memory.js';
import { OperatorMemorySampler, sampleOperatorMemory } from './operator-memory-sampler.js';
import { heapSnapshotOf } from './operator-heap-snapshot.js';
import { OperatorMetricsRecorder, scrapeNote } from './operator-metrics-recorder.js';
import { cpuBetween, cpuNote, cpuSnapshot } from './machine-cpu.js';
import { processUsage, resetPeakRss } from './process-usage.js';
import { baselineClient, baselineOnce, deleteNamespaces } from './scenario-apply-baseline.js';
import type { counts as countsOf, StepContext, StepResult } from './scenario-plan.js';
import { CoreSpeedProbes, perCoreMs, speedNote, type SpeedComparison } from './speed-probe-recorder.js';
import { ratio, summarize } from './stats.js';

export interface EndToEndOptions extends StepContext {
  scenarios: number[];
  counts: ReturnType<typeof countsOf>;
}

const operatorUserAgent = 'preview-operator';
const readyCommentMark = '✅ Ready';
/** The operator's CPU profile: one sample a millisecond, V8's default (the bench sampled every 0.5 ms before). */
const operatorProfileIntervalUs = 1000;

/** Times (performance.now(), ms) at which each stage of one pull request was seen. */
interface Timeline {
  repo: PullRequestDriver;
  number: number;
  environment?: string;
  sent?: number;
  answered?: number;
  written?: number;
  applied?: number;
  ready?: number;
  commented?: number;
  namespaceGone?: number;
}

/** What one pass of the burst measured. */
interface BurstPass {
  timelines: Timeline[];
  converged: boolean;
  allReadyMs: number;
  operatorCpuSeconds: number;
  figures: Figure[];
  samples: Record<string, number[]>;
  notes: string[];
  /** Where the machine's CPU went, from the first delivery to all Ready (also in `notes`). */
  machineCpuNote: string;
  /** Why not all got Ready, when they did not (also in `notes`). */
  convergenceNote?: string;
  /** The profiles' summaries (a profiled pass only). */
  profileNotes: string[];
  /** How fast each core ran from the first delivery to all Ready, against the quiet seconds before (none without probes). */
  speed: SpeedComparison[];
}

async function freePort(): Promise<number> {
  const srv = createServer();
  await new Promise<void>((resolve) => srv.listen(0, '127.0.0.1', resolve));
  const { port } = srv.address() as AddressInfo;
  await new Promise((r) => srv.close(r));
  return port;
}

function post(agent: Agent, url: string, delivery: WebhookDelivery): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request(url, { method: 'POST', agent, headers: { ...delivery.headers, 'content-length': Buffer.byteLength(delivery.body) } }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (d: string) => (body += d));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(delivery.body);
  });
}

/** Watches what the operator does, from the outside; records first-seen times per environment. */
class Observer {
  readonly byEnvironment = new Map<string, Timeline>();
  // First-seen times by name, kept for environments not tracked yet: a watch event can arrive
  // before the webhook's answer that names the environment.
  private readonly early = new Map<string, Partial<Pick<Timeline, 'written' | 'ready' | 'applied' | 'namespaceGone'>>>();
  private note(name: string, stage: 'written' | 'ready' | 'applied' | 'namespaceGone'): void {
    const now = performance.now();
    const t = this.byEnvironment.get(name);
    if (t) t[stage] ??= now;
    else {
      const e = this.early.get(name) ?? {};
      e[stage] ??= now;
      this.early.set(name, e);
    }
  }
  private readonly customResources = new Map<string, Set<string>>();
  private readonly informers: Informer<KubeObject>[] = [];
  /** Custom resources (Algorithm + Database) one environment renders. */
  constructor(private readonly env: BenchEnvironment, private readonly expectedCustomResources: number) {}

  async start(): Promise<void> {
    const { admin } = this.env;
    const pe = new Informer<KubeObject>(admin, { apiVersion: 'preview.alien6.io/v1alpha1', kind: 'PreviewEnvironment' }, { logger: silentLogger });
    const seen = (obj: KubeObject) => {
      this.note(obj.metadata.name!, 'written');
      if ((obj.status as { phase?: string } | undefined)?.phase === 'Ready') this.note(obj.metadata.name!, 'ready');
    };
    pe.addHandler({ onAdd: seen, onUpdate: (_o, n) => seen(n) });
    const cr = (obj: KubeObject) => {
      const ns = obj.metadata.namespace!;
      const set = this.customResources.get(ns) ?? new Set<string>();
      set.add(`${obj.kind}/${obj.metadata.name}`);
      this.customResources.set(ns, set);
      if (set.size >= this.expectedCustomResources) this.note(ns, 'applied');
    };
    const algorithms = new Informer<KubeObject>(admin, { apiVersion: 'ai.alien6.io/v1', kind: 'Algorithm' }, { logger: silentLogger });
    const databases = new Informer<KubeObject>(admin, { apiVersion: 'mycompany.com/v1', kind: 'Database' }, { logger: silentLogger });
    algorithms.addHandler({ onAdd: cr });
    databases.addHandler({ onAdd: cr });
    const namespaces = new Informer<KubeObject>(admin, { apiVersion: 'v1', kind: 'Namespace' }, { logger: silentLogger });
    namespaces.addHandler({
      onDelete: (obj) => {
        this.note(obj.metadata.name!, 'namespaceGone');
        this.customResources.delete(obj.metadata.name!);
      },
    });
    this.informers.push(pe, algorithms, databases, namespaces);
    for (const i of this.informers) i.start();
    await Promise.all(this.informers.map((i) => i.waitForSync()));
  }

  track(t: Timeline): void {
    Object.assign(t, this.early.get(t.environment!) ?? {});
    this.early.delete(t.environment!);
    this.byEnvironment.set(t.environment!, t);
  }

  /** The emulator's comment on the PR says ready (polled: the emulator is in this process). */
  pollComments(): void {
    for (const t of this.byEnvironment.values()) {
      if (t.commented !== undefined || t.sent === undefined) continue;
      const comments = this.env.gh.comments(t.repo.repository, t.number);
      if (comments.some((c) => c.body.includes(readyCommentMark))) t.commented = performance.now();
    }
  }

  async stop(): Promise<void> {
    await Promise.all(this.informers.map((i) => i.stop()));
  }
}

/** Sends one delivery and records its environment; the answer names it. */
async function send(agent: Agent, url: string, observer: Observer, t: Timeline, delivery: WebhookDelivery): Promise<void> {
  t.sent = performance.now();
  const answer = await post(agent, url, delivery);
  t.answered = performance.now();
  if (answer.status >= 300) throw new Error(`delivery for ${t.repo.repository.name}#${t.number} answered ${answer.status}: ${answer.body}`);
  const environment = (JSON.parse(answer.body) as { environment?: string }).environment;
  if (!environment) throw new Error(`the answer names no environment: ${answer.body}`);
  if (t.environment === undefined) {
    t.environment = environment;
    observer.track(t);
  }
}

/** Waits for `done`; false when the deadline passed first (bounded: the bench always ends). */
async function waitFor(what: string, timeoutMs: number, operator: JsonLineChild, observer: Observer, done: () => boolean): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (!done()) {
    if (operator.hasExited()) throw new Error(`the operator exited while waiting for ${what}:\n${operator.stderrTail()}`);
    if (Date.now() > deadline) return false;
    observer.pollComments();
    await new Promise((r) => setTimeout(r, 50));
  }
  return true;
}

async function waitUntil(what: string, timeoutMs: number, operator: JsonLineChild, observer: Observer, done: () => boolean): Promise<void> {
  if (!(await waitFor(what, timeoutMs, operator, observer, done))) throw new Error(`timed out after ${timeoutMs / 1000} s waiting for ${what}`);
}

/** Where the environments stand: counts by status.phase, and the first not-Ready one's reason. */
async function standing(env: BenchEnvironment, names: ReadonlySet<string>): Promise<string> {
  const { items } = await env.admin.list<KubeObject>({ apiVersion: 'preview.alien6.io/v1alpha1', kind: 'PreviewEnvironment' });
  const mine = items.filter((i) => names.has(i.metadata.name!));
  const phases = countBy(mine, (i) => String((i.status as { phase?: string } | undefined)?.phase ?? 'none'));
  const waiting = mine.find((i) => (i.status as { phase?: string } | undefined)?.phase !== 'Ready');
  const reason = (waiting?.status as { conditions?: Array<{ type: string; message?: string }> } | undefined)?.conditions?.find((c) => c.type === 'Ready')?.message;
  return `phases: ${phases}${waiting ? `; e.g. ${waiting.metadata.name}: ${reason ?? 'no Ready condition'}` : ''}`;
}

const span = (list: Timeline[], from: keyof Timeline, to: keyof Timeline) =>
  list.map((t) => (typeof t[to] === 'number' && typeof t[from] === 'number' ? (t[to] as number) - (t[from] as number) : Number.NaN)).filter(Number.isFinite);

function stageFigures(scenario: number, list: Timeline[], prefix: string): { figures: Figure[]; samples: Record<string, number[]> } {
  const stages: Array<[string, keyof Timeline, keyof Timeline]> = [
    ['delivery → answered', 'sent', 'answered'],
    ['delivery → PreviewEnvironment written', 'sent', 'written'],
    ['written → applied', 'written', 'applied'],
    // The controller reports to GitHub before it writes the status (the status keeps the ids
    // GitHub returned), so the comment says ready a little before status.phase does.
    ['applied → comment says ready', 'applied', 'commented'],
    ['comment says ready → status.phase Ready', 'commented', 'ready'],
    ['delivery → applied', 'sent', 'applied'],
    ['delivery → Ready', 'sent', 'ready'],
    ['delivery → comment says ready', 'sent', 'commented'],
  ];
  const figures: Figure[] = [];
  const samples: Record<string, number[]> = {};
  for (const [label, from, to] of stages) {
    const values = span(list, from, to);
    const s = summarize(values);
    samples[`${prefix} ${label}`] = values;
    figures.push({ scenario, name: `${label}, median`, value: s.p50, unit: 'ms' });
    figures.push({
      scenario, name: `${label}, p95`, value: s.p95, unit: 'ms',
      ...(label === 'delivery → Ready' && scenario === 2 ? { target: { op: '<=' as const, value: 5000, text: 'p95 ≤ 5 s' } } : {}),
    });
  }
  return { figures, samples };
}

function countBy<T>(items: readonly T[], key: (item: T) => string): string {
  const m = new Map<string, number>();
  for (const i of items) m.set(key(i), (m.get(key(i)) ?? 0) + 1);
  return [...m.entries()].sort((a, b) => b[1] - a[1]).map(([k, v]) => `${k} ${v}`).join(', ');
}

/** `ms` of the operator's "rendered" log lines for these environments (absent when it logs none). */
function renderTimes(logFile: string, environments: readonly string[]): number[] {
  const wanted = new Set(environments);
  const out: number[] = [];
  let text = '';
  try {
    text = readFileSync(logFile, 'utf8');
  } catch {
    return out;
  }
  for (const line of text.split('\n')) {
    if (!line.includes('"rendered"')) continue;
    try {
      const entry = JSON.parse(line) as { msg?: string; environment?: string; ms?: number };
      if (entry.msg === 'rendered' && entry.environment && wanted.has(entry.environment) && typeof entry.ms === 'number') out.push(entry.ms);
    } catch { /* not JSON */ }
  }
  return out;
}

/**
 * Times a source reading .preview/ at each PR's head the way the controller does (one warm-up
 * first, so the unchanged preview.yaml is known as it is to a running operator).
 */
async function previewReadTimes(source: PreviewFileSource, repo: PullRequestDriver, numbers: readonly number[]): Promise<number[]> {
  const location = (sha: string) => ({ cloneUrl: repo.cloneUrl, owner: repo.repository.owner, repo: repo.repository.name, sha });
  const first = repo.pullRequest(numbers[0] ?? 1).head.sha;
  await source.readFile(location(first), configPath);
  const out: number[] = [];
  for (const number of numbers.slice(1)) {
    const sha = repo.pullRequest(number).head.sha;
    const t = performance.now();
    // As the controller reads them: one listing for both, then the configuration's content.
    const files = await source.listFiles(location(sha), [configPath, mainPath]);
    const config = files.get(configPath);
    if (config) await source.readEntry(location(sha), config);
    out.push(performance.now() - t);
  }
  return out;
}

/** Each client's writes other than the operator's, by verb/resource: where Kubernetes' own work goes. */
function otherClientsWrites(others: readonly AuditEvent[]): string {
  const byUser = new Map<string, AuditEvent[]>();
  for (const w of others) {
    const list = byUser.get(w.user.username);
    if (list) list.push(w);
    else byUser.set(w.user.username, [w]);
  }
  return [...byUser.entries()].sort((a, b) => b[1].length - a[1].length)
    .map(([user, list]) => `${user} (${countBy(list, verbResource)})`).join('; ');
}

/** An audited write as `verb resource[/subresource]`, for counting writes by kind. */
function verbResource(w: { verb: string; objectRef?: { resource?: string; subresource?: string } }): string {
  return `${w.verb} ${w.objectRef?.resource ?? '?'}${w.objectRef?.subresource ? `/${w.objectRef.subresource}` : ''}`;
}

export async function endToEnd(env: BenchEnvironment, options: EndToEndOptions): Promise<StepResult[]> {
  const { gh, cluster, log } = env;
  const wanted = new Set(options.scenarios);
  const n = options.counts;
  const results: StepResult[] = [];
  const secret = randomBytes(20).toString('hex');
  const owner = `bench-${randomBytes(2).toString('hex')}`;
  const initialFiles = { '.preview/preview.yaml': benchPreviewYaml, 'README.md': '# bench repository\n' };
  const wantsBurst = wanted.has(4) || wanted.has(5) || wanted.has(8);

  // Repositories first: the operator is told their local clone URLs when it starts.
  const single = await PullRequestDriver.create(gh, { owner, name: 'single', webhookSecret: secret, initialFiles });
  const burstRepos: PullRequestDriver[] = [];
  if (wantsBurst) {
    for (let r = 1; r <= n.burst.repositories; r++) {
      burstRepos.push(await PullRequestDriver.create(gh, { owner, name: `burst-${String(r).padStart(2, '0')}`, webhookSecret: secret, initialFiles }));
    }
  }
  const all = [single, ...burstRepos];
  const cloneUrls = Object.fromEntries(all.map((d) => [`${d.repository.owner}/${d.repository.name}`.toLowerCase(), d.cloneUrl]));

  const scratch = mkdtempSync(path.join(tmpdir(), 'preview-bench-'));
  const port = await freePort();
  const resyncModule = (await import('../src/intake/resync.js')) as Record<string, unknown>;
  const resyncAvailable = typeof resyncModule.createResyncRunnable === 'function' || typeof resyncModule.registerResync === 'function';
  const controllers = ['algorithm', 'database', 'preview-environment', 'webhook', ...(resyncAvailable ? ['resync'] : [])];
  const flags = [
    `--controllers=${controllers.join(',')}`, '--leader-elect=false', '--log-level=info',
    '--webhook-host=127.0.0.1', `--webhook-port=${port}`, `--metrics-port=${port}`, `--webhook-secret=${secret}`,
    `--github-api-url=${gh.url}`, `--github-token=${gh.createToken('preview-operator-bot')}`, '--github-throttle=false',
    `--preview-domain=${benchDomain}`, '--tls-issuer=none',
    `--checkout-cache-dir=${path.join(scratch, 'checkouts')}`, '--git-allowed-protocols=file,https',
    '--resync-interval=60s',
  ];
  const logFile = path.join(options.outDir, 'operator.log');
  const child = startBenchChild('operator-entry', flags, {
    KUBECONFIG: cluster.kubeconfigPath, BENCH_OPERATOR: JSON.stringify({ cloneUrls }),
  }, { logFile });
  const ready = await child.nextJson<{ benchOperator: { webhookUrl: string; metricsUrl: string; pid: number; workers: Record<string, number> } }>(120_000, (v) => v?.benchOperator !== undefined);
  const operator = { child, ...ready.benchOperator };
  const compiledEntry = path.relative(repositoryRoot, path.join(benchBuildDir, 'bench/operator-entry.js'));
  const image = imageRuntime(repositoryRoot);
  const notes = [
    `Operator: its own process (pid ${operator.pid}, src/cli-run.ts startOperator), compiled by tsc (tsconfig.bench.json) and run as \`node ${image.nodeFlags.join(' ')} ${compiledEntry}\` with the image's ENV (${Object.entries(image.env).map(([k, v]) => `${k}=${v}`).join(' ')}) — the Dockerfile's way (dist/src/main.js), no tsx loader; controllers ${controllers.join(', ')} (workers: ${Object.entries(operator.workers).map(([k, v]) => `${k} ${v}`).join(', ')}, the defaults); leader election off; GitHub token auth with the throttle off (the emulator sets no secondary limits; GitHub's ≥1 s write spacing would dominate every figure); TLS off (no cert-manager); repositories over file://.`,
    ...(resyncAvailable ? [] : ['The resync is not running: src/github/resync.ts exports no runnable.']),
  ];
  log(`operator started (pid ${operator.pid}) at ${operator.webhookUrl}`);

  const observer = new Observer(env, 2);
  await observer.start();
  const agent = new Agent({ keepAlive: true, maxSockets: 50 });
  const baseline = baselineClient(env);
  const baselineNamespaces: string[] = [];
  const usageAtStart = processUsage(operator.pid);
  try {
    // Each part reports on its own: a part that fails or times out does not lose the others.
    const attempt = async (scenarios: number[], title: string, body: () => Promise<void>) => {
      try {
        await body();
      } catch (err) {
        log(`${title} failed: ${(err as Error).stack ?? String(err)}`);
        for (const scenario of scenarios.filter((x) => wanted.has(x))) results.push({ scenario, title, figures: [], samples: {}, notes, error: (err as Error).message });
      }
    };

    // ---- scenario 2 (with 3 side by side) ----
    if (wanted.has(2) || wanted.has(3)) await attempt([2, 3], 'One PR, end to end', async () => {
      const singles: Timeline[] = [];
      const baselineMs: number[] = [];
      // Warm-up rounds first, not measured, for both sides: the first reconcile pays for
      // discovery, and V8 compiles the renderer's and the clients' hot paths over the first
      // dozen runs (a render takes 5–13 ms cold, 2 ms warm) — a running operator has done both.
      const warmups = n.warmupRounds;
      const rounds = (wanted.has(2) ? n.onePr : n.baselineRuns) + warmups;
      for (let i = 0; i < rounds; i++) {
        if (wanted.has(2) || i < warmups) {
          const { delivery, pullRequest } = await single.open({ files: { 'CHANGE.md': `change ${i}\n` }, author: 'alice', authorAssociation: 'MEMBER' });
          const t: Timeline = { repo: single, number: pullRequest.number };
          await send(agent, operator.webhookUrl, observer, t, delivery);
          await waitUntil(`${t.environment} comment says ready`, 120_000, operator.child, observer, () => t.commented !== undefined);
          if (i >= warmups) singles.push(t);
        }
        if (wanted.has(3)) {
          const b = await baselineOnce(baseline, i < warmups ? `warm-${i}` : String(i));
          if (i >= warmups) baselineMs.push(b.ms);
          baselineNamespaces.push(b.namespace);
        }
      }
      if (wanted.has(2)) {
        const { figures, samples } = stageFigures(2, singles, 'S2');
        // Inside the operator: its "rendered" log line times reading .preview/ + render of each environment.
        const renderedMs = renderTimes(logFile, singles.map((t) => t.environment!));
        if (renderedMs.length > 0) {
          const r = summarize(renderedMs);
          samples['S2 inside the operator: read .preview/ + render'] = renderedMs;
          figures.push({ scenario: 2, name: 'of written → applied: read .preview/ + render inside the operator, median', value: r.p50, unit: 'ms' });
        }
        // The reads the controller makes (.preview/ listed at the head SHA, preview.yaml read), timed
        // in the bench after each PR with sources of its own: through GitHub's API, as the operator
        // reads them (the operator reads ahead when the delivery is accepted, so its render rarely
        // waits for them), and through git, as it did before (a shallow fetch of each SHA).
        const numbers = singles.map((t) => t.number);
        const apiMs = await previewReadTimes(new GitHubPreviewFiles({ clients: createGitHubClients({ auth: { type: 'token', token: gh.createToken('preview-bench-reader') }, baseUrl: gh.url, throttle: { enabled: false } }) }), single, numbers);
        samples['S2 .preview/ reads at the head SHA through the API (bench)'] = apiMs;
        figures.push({ scenario: 2, name: 'reading .preview/ through the API: listing + preview.yaml (same calls, in the bench), median', value: summarize(apiMs).p50, unit: 'ms' });
        const gitMs = await previewReadTimes(new RepositoryCache({ cacheDir: path.join(scratch, 'bench-checkouts'), allowedProtocols: ['file:'] }), single, numbers);
        samples['S2 .preview/ reads at the head SHA through git (bench)'] = gitMs;
        figures.push({ scenario: 2, name: 'the same reads through git (fetch + ls-tree + cat-file), for comparison, median', value: summarize(gitMs).p50, unit: 'ms' });
        const applied = summarize(span(singles, 'sent', 'applied')).p50;
        const base = summarize(baselineMs).p50;
        if (wanted.has(3)) {
          figures.push({ scenario: 2, name: 'delivery → applied ÷ baseline (medians)', value: ratio(applied, base), unit: 'ratio', target: { op: '<=', value: 1.5, text: '≤ 1.5 × baseline' }, note: 'same run, alternating' });
        }
        results.push({ scenario: 2, title: 'One PR, end to end', figures, samples, notes: [`${singles.length} pull requests one after another (each opened when the previous one's comment said ready), after ${warmups} unmeasured warm-up PR(s)${wanted.has(3) ? ', each followed by a baseline run, also unmeasured' : ''}.`, ...notes] });
      }
      if (wanted.has(3)) {
        const s = summarize(baselineMs);
        results.push({
          scenario: 3, title: 'The limit: minimal apply loop',
          figures: [
            { scenario: 3, name: 'baseline apply of one environment, median', value: s.p50, unit: 'ms' },
            { scenario: 3, name: 'baseline apply, p95', value: s.p95, unit: 'ms' },
          ],
          samples: { 'S3 baseline apply (minimal loop)': baselineMs },
          notes: ['Same manifests as scenario 2 (bench/bench-preview.ts), one KubeClient, SSA in apply-order ranks, each rank in parallel; run alternately with scenario 2\'s pull requests.'],
        });
      }
    });

    // ---- scenario 4: burst ----
    const apiServerProfileSeconds = options.quick ? 10 : 30;
    async function apiServerProfileNote(recording: Promise<Error | undefined> | undefined, file: string, outDir: string): Promise<string> {
      const failed = await recording;
      if (failed) return `The API server's CPU profile could not be recorded: ${failed.message}`;
      try {
        const summary = await summarizeApiServerProfile(file, apiServerProfileSeconds);
        writeFileSync(path.join(outDir, 'apiserver-burst-profile.txt'), `${summary.top}\n`);
        return `CPU profile of the API server over the burst's first ${apiServerProfileSeconds} s (apiserver-burst.pprof; \`go tool pprof -top -cum\` in apiserver-burst-profile.txt): ${summary.headline}.`;
      } catch (err) {
        return `The API server's CPU profile could not be summarised: ${(err as Error).message}`;
      }
    }
    let burst: Timeline[] = [];
    let burstConverged = false;
    // Timers the burst starts; stopped here too when the burst fails half-way.
    let stopDiagnostics = () => {};
    /**
     * One burst: `n.burst.pullRequests` PRs opened across the burst repositories, their deliveries
     * sent within `n.burst.withinMs`, timed until every environment is Ready and every comment says
     * so. With `profiled`, the operator's and the API server's CPU profilers run through it: a
     * profiler costs the operator CPU and so the burst seconds, so the timed pass runs without
     * them and a second pass takes the profiles. Each pass runs beside a speed probe: the burst's
     * time is its busy CPU seconds over two cores, and those move with how fast the host lets a
     * core run (up to 2× for the same work), which the probe measures from the quiet seconds before.
     */
    const burstPass = async (profiled: boolean, onPlanned: (timelines: Timeline[]) => void): Promise<BurstPass> => {
      const probes = await CoreSpeedProbes.start();
      try {
        return await measureBurst(profiled, onPlanned, probes);
      } finally {
        await probes.stop();
      }
    };
    const measureBurst = async (profiled: boolean, onPlanned: (timelines: Timeline[]) => void, probes: CoreSpeedProbes): Promise<BurstPass> => {
      // Commits are made before the clock starts: repositories in parallel, each one's PRs in
      // turn (a driver numbers PRs from its own state). Sent round-robin over repositories.
      const perRepo = burstRepos.map((_, r) => Math.floor(n.burst.pullRequests / burstRepos.length) + (r < n.burst.pullRequests % burstRepos.length ? 1 : 0));
      const opened = await Promise.all(burstRepos.map(async (repo, r) => {
        const list: Array<{ t: Timeline; delivery: WebhookDelivery }> = [];
        for (let k = 0; k < perRepo[r]!; k++) {
          const { delivery, pullRequest } = await repo.open({ files: { 'CHANGE.md': `burst ${k}\n` }, author: 'alice', authorAssociation: 'MEMBER' });
          list.push({ t: { repo, number: pullRequest.number }, delivery });
        }
        return list;
      }));
      const planned: Array<{ t: Timeline; delivery: WebhookDelivery }> = [];
      for (let k = 0; k < Math.max(...perRepo); k++) for (const list of opened) if (list[k]) planned.push(list[k]!);
      const timelines = planned.map((p) => p.t);
      onPlanned(timelines);
      log(`burst: ${planned.length} PRs across ${burstRepos.length} repositories, sent within ${n.burst.withinMs} ms`);
      const profileFile = path.join(options.outDir, 'operator-burst.cpuprofile');
      if (profiled) {
        operator.child.send(`profile-start ${operatorProfileIntervalUs}`);
        await operator.child.nextJson(10_000, (v) => v?.benchProfile === 'started');
      }
      // The API server's profile over the burst's first seconds (its steady part), beside the operator's.
      const apiServerProfileFile = path.join(options.outDir, 'apiserver-burst.pprof');
      const apiServerProfile = profiled
        ? recordApiServerProfile({ server: cluster.server, token: cluster.token, caFile: cluster.kubeConfig.getCurrentCluster()!.caFile! }, apiServerProfileSeconds, apiServerProfileFile).then(() => undefined, (err: Error) => err)
        : undefined;
      const auditMark = cluster.audit.mark();
      const ghMark = gh.mark();
      // The burst's own peak: VmHWM from here on (the earlier scenarios' peak is left out).
      const peakReset = resetPeakRss(operator.pid);
      const usage0 = processUsage(operator.pid);
      const cpuPids = () => ({ operator: operator.pid, ...cluster.pids(), 'bench (GitHub emulator, clients, cluster supervision)': process.pid, ...probes.pids() });
      const cpu0 = cpuSnapshot(cpuPids());
      let peakRss = usage0.rssMb;
      const sampler = setInterval(() => {
        try {
          peakRss = Math.max(peakRss, processUsage(operator.pid).rssMb);
        } catch { /* exited */ }
      }, 200);
      stopDiagnostics = () => clearInterval(sampler); // widened below once the others run
      // Diagnostics of the burst: the operator's memory every 2 s (the breakdown of the highest
      // RSS) and its /metrics — now, every second (queue depths), and at all Ready.
      const metrics = await OperatorMetricsRecorder.start(operator.metricsUrl, { tickMs: 1000 });
      const memory = new OperatorMemorySampler(operator.child, 2000);
      memory.start();
      stopDiagnostics = () => {
        clearInterval(sampler);
        metrics.cancel();
        void memory.stop();
      };
      // The bench times the answers, and its process also serves the operator's GitHub requests
      // (the emulator): its own delay is in "delivery → answered", so it is measured too.
      const delayResolutionMs = 10;
      const benchDelay = monitorEventLoopDelay({ resolution: delayResolutionMs });
      benchDelay.enable();
      const started = performance.now();
      const startedAt = Date.now();
      const interval = n.burst.withinMs / planned.length;
      await Promise.all(planned.map((p, i) => new Promise<void>((resolve, reject) => {
        setTimeout(() => send(agent, operator.webhookUrl, observer, p.t, p.delivery).then(resolve, reject), i * interval);
      })));
      benchDelay.disable();
      const lastSent = Math.max(...timelines.map((t) => t.sent ?? started)) - started;
      const lastAnswered = performance.now() - started;
      const burstTimeout = options.quick ? 180_000 : 300_000;
      const converged = await waitFor('every burst environment Ready', burstTimeout, operator.child, observer, () => timelines.every((t) => t.ready !== undefined));
      const allReadyMs = converged ? performance.now() - started : Number.NaN;
      const burstWindow = { from: startedAt, to: Date.now() };
      const speed = probes.compare(burstWindow);
      // Every sample, for comparing runs later (the figures keep only the medians).
      const speedSamples = probes.samplesJson(burstWindow);
      if (speedSamples) writeFileSync(path.join(options.outDir, `speed-probe-${profiled ? 'profiled' : 'timed'}-burst.json`), speedSamples);
      // A failed end scrape loses these figures, not the burst's others.
      const activity = await metrics.stop().catch((err: Error) => err);
      const readyByDeadline = timelines.filter((t) => t.ready !== undefined).length;
      const where = converged ? '' : await standing(env, new Set(timelines.map((t) => t.environment!)));
      const usageReady = processUsage(operator.pid);
      const cpuReady = cpuSnapshot(cpuPids());
      if (profiled) {
        operator.child.send(`profile-stop ${profileFile}`);
        await operator.child.nextJson(60_000, (v) => v?.benchProfile === 'written');
      }
      const commentsDone = await waitFor('every burst comment says ready', converged ? 120_000 : 5_000, operator.child, observer, () => timelines.every((t) => t.commented !== undefined));
      const allCommentedMs = commentsDone ? performance.now() - started : Number.NaN;
      clearInterval(sampler);
      const memoryPeak = await memory.stop();
      const usage1 = processUsage(operator.pid);
      // Last: writing the snapshot blocks the operator for seconds and raises its RSS.
      const heapNote = options.heapSnapshot && !profiled ? await heapSnapshotOf(operator.child, options.outDir, 'operator-burst', log) : undefined;
      await cluster.audit.settle();
      // The log read once: every write, and the operator's among them.
      const allWrites = cluster.audit.writes(auditMark);
      const writes = allWrites.filter((w) => (w.userAgent ?? '').startsWith(operatorUserAgent));
      const operatorWrites = new Set(writes);
      const requests = gh.requestsSince(ghMark);
      const count = timelines.length;
      const convergenceNote = converged ? undefined : `Not all Ready after ${burstTimeout / 1000} s (${readyByDeadline} of ${timelines.length}); per-environment figures cover those that got there. At the deadline: ${where}.`;
      const machineCpuNote = cpuNote(`from the first delivery to ${converged ? 'all Ready' : 'the deadline'}`, cpuBetween(cpu0, cpuReady), (converged ? allReadyMs : performance.now() - started) / 1000);
      const { figures, samples } = stageFigures(4, timelines, 'S4');
      figures.unshift(
        { scenario: 4, name: `all ${count} Ready (from the first delivery)`, value: allReadyMs / 1000, unit: 's', target: { op: '<=', value: 60, text: '≤ 60 s on 2 cores' } },
        { scenario: 4, name: `Ready within the ${burstTimeout / 1000} s the bench waits`, value: readyByDeadline, unit: 'count' },
        ...speed.map((c, core): Figure => ({
          scenario: 4, name: `core ${core}'s time for the speed probe's fixed work meanwhile, median`, value: c.duringMs, unit: 'ms',
          note: `${c.quietMs.toFixed(1)} ms in the quiet seconds before (×${c.slowdown.toFixed(2)}); the same work, so a slower core shows as a longer time`,
        })),
        { scenario: 4, name: `all ${count} comments say ready`, value: allCommentedMs / 1000, unit: 's' },
        { scenario: 4, name: peakReset ? 'operator peak RSS, first delivery → all Ready (VmHWM)' : 'operator peak RSS (VmHWM, process lifetime: the kernel refused a reset)', value: usageReady.peakRssMb, unit: 'MB', target: { op: '<=', value: 250, text: '≤ 250 MB' } },
        { scenario: 4, name: 'operator peak RSS during the burst (sampled 5/s)', value: peakRss, unit: 'MB' },
        { scenario: 4, name: 'operator peak RSS, first delivery → all comments (VmHWM)', value: usage1.peakRssMb, unit: 'MB' },
        { scenario: 4, name: 'operator CPU seconds, burst → all Ready', value: usageReady.cpuSeconds - usage0.cpuSeconds, unit: 's' },
        { scenario: 4, name: 'operator CPU seconds, burst → all comments', value: usage1.cpuSeconds - usage0.cpuSeconds, unit: 's' },
        { scenario: 4, name: 'API writes per environment (audit log)', value: writes.length / count, unit: 'count' },
        { scenario: 4, name: 'GitHub requests per environment', value: requests.length / count, unit: 'count' },
        // The histogram holds the periods of a 10-ms timer: the delay is what exceeds the 10 ms.
        { scenario: 4, name: 'the bench\'s own event-loop delay while the deliveries were answered, p99', value: Math.max(0, benchDelay.percentile(99) / 1e6 - delayResolutionMs), unit: 'ms', note: `max ${Math.max(0, benchDelay.max / 1e6 - delayResolutionMs).toFixed(0)} ms; the emulator in the bench serves the operator's GitHub requests meanwhile` },
      );
      const burstNotes = [
        `${count} PRs across ${burstRepos.length} repositories, deliveries scheduled ${interval.toFixed(0)} ms apart (last sent at ${lastSent.toFixed(0)} ms, last answered at ${lastAnswered.toFixed(0)} ms).`,
        ...(convergenceNote ? [convergenceNote] : []),
        // How the operator ran, beside the figures of its memory and CPU (scenario 2 may not be in the run).
        ...notes,
        `Every API write from the first delivery until all comments were read (${allWrites.length}), by client: ${countBy(allWrites, (w) => w.user.username)}; `
          + `each other client's by verb/resource: ${otherClientsWrites(allWrites.filter((w) => !operatorWrites.has(w)))}.`,
        `Operator API writes (${writes.length}) by verb/resource: ${countBy(writes, verbResource)}.`,
        machineCpuNote,
        probes.error ? `No speed probe ran: ${probes.error.message}` : speedNote(speed, `from the first delivery to ${converged ? 'all Ready' : 'the deadline'}`),
        `GitHub requests (${requests.length}) by operation: ${countBy(requests, (r) => `${r.method} ${r.operationId ?? r.path}${r.status === 304 ? ' (304)' : ''}`)}.`,
      ];
      const profileNotes: string[] = [];
      if (profiled) {
        try {
          const summary = summarizeCpuProfile(JSON.parse(readFileSync(profileFile, 'utf8')) as CpuProfile, { top: 15 });
          writeFileSync(path.join(options.outDir, 'operator-burst-profile.md'), summary.markdown);
          profileNotes.push(`CPU profile of the operator from the first delivery to all Ready (operator-burst.cpuprofile; top frames in operator-burst-profile.md, at lines of the compiled .js under .cache/bench-build): ${summary.headline}`);
        } catch (err) {
          profileNotes.push(`The CPU profile could not be summarised: ${(err as Error).message}`);
        }
        profileNotes.push(await apiServerProfileNote(apiServerProfile, apiServerProfileFile, options.outDir));
      }
      figures.push(...memoryFigures(4, memoryPeak.highest));
      burstNotes.push(memoryNote(memoryPeak.highest, memoryPeak.samples));
      if (activity instanceof Error) burstNotes.push(`The operator's /metrics could not be scraped at the end of the burst: ${activity.message}`);
      else {
        figures.push(...burstActivityFigures(4, activity.activity, operator.workers));
        burstNotes.push(activityNote(activity.activity), scrapeNote(activity));
      }
      if (heapNote) burstNotes.push(heapNote);
      return { timelines, converged, allReadyMs, operatorCpuSeconds: usageReady.cpuSeconds - usage0.cpuSeconds, figures, samples, notes: burstNotes, machineCpuNote, convergenceNote, profileNotes, speed };
    };
    let timedPass: BurstPass | undefined;
    if (wantsBurst) await attempt([4, 5, 8], 'Burst', async () => {
      const pass = await burstPass(false, (timelines) => { burst = timelines; });
      timedPass = pass;
      burstConverged = pass.converged;
      if (wanted.has(4)) results.push({ scenario: 4, title: 'Burst', figures: pass.figures, samples: pass.samples, notes: pass.notes });
    });

    stopDiagnostics();

    // ---- scenario 5: idle ----
    if (wanted.has(5) && burst.length > 0 && !burstConverged) {
      results.push({ scenario: 5, title: 'Idle', figures: [], samples: {}, notes, error: 'skipped: the burst had not converged (idle means every environment Ready), see scenario 4' });
    }
    if (wanted.has(5) && burst.length > 0 && burstConverged) await attempt([5], 'Idle', async () => {
      log(`idle: ${n.idleMs / 1000} s with ${burst.length} environments`);
      const auditMark = cluster.audit.mark();
      const ghMark = gh.mark();
      const u0 = processUsage(operator.pid);
      // Two scrapes only (start, end): sampling every second would be most of an idle operator's CPU.
      const metrics = await OperatorMetricsRecorder.start(operator.metricsUrl);
      const t0 = performance.now();
      await waitUntil('the idle period', n.idleMs + 5000, operator.child, observer, () => performance.now() - t0 >= n.idleMs);
      const minutes = (performance.now() - t0) / 60_000;
      const u1 = processUsage(operator.pid);
      const activity = await metrics.stop();
      const memoryAtEnd = memoryBreakdown(await sampleOperatorMemory(operator.child));
      await cluster.audit.settle();
      const writes = cluster.audit.writes(auditMark, { userAgent: operatorUserAgent });
      const requests = gh.requestsSince(ghMark);
      const non304 = requests.filter((r) => r.status !== 304);
      results.push({
        scenario: 5, title: 'Idle',
        figures: [
          { scenario: 5, name: 'API writes per minute', value: writes.length / minutes, unit: '/min', target: { op: '<=', value: 0, text: 'zero' } },
          { scenario: 5, name: 'non-304 GitHub requests per minute', value: non304.length / minutes, unit: '/min', target: { op: '<=', value: 0, text: 'zero' } },
          { scenario: 5, name: 'GitHub requests per minute (all)', value: requests.length / minutes, unit: '/min' },
          { scenario: 5, name: 'operator CPU seconds per minute', value: (u1.cpuSeconds - u0.cpuSeconds) / minutes, unit: 's' },
          { scenario: 5, name: 'operator RSS at the end', value: u1.rssMb, unit: 'MB' },
          { scenario: 5, name: 'operator V8 heap used at the end', value: memoryAtEnd.heapUsedMb, unit: 'MB' },
          ...idleActivityFigures(5, activity.activity),
        ],
        samples: {},
        notes: [
          `${burst.length} Ready environments left alone for ${(minutes * 60).toFixed(0)} s (resync interval 60 s${resyncAvailable ? '' : ', resync not registered'}).`,
          `Memory at the end: RSS ${memoryAtEnd.rssMb.toFixed(1)} MB = V8 heap ${memoryAtEnd.heapTotalMb.toFixed(1)} MB reserved (${memoryAtEnd.heapUsedMb.toFixed(1)} used) + external ${memoryAtEnd.externalMb.toFixed(1)} MB + the rest ${memoryAtEnd.restMb.toFixed(1)} MB${options.heapSnapshot ? ' (after the heap snapshot taken at the end of the burst, which raised the RSS)' : ''}.`,
          activityNote(activity.activity),
          ...(writes.length ? [`Writes: ${countBy(writes, verbResource)}.`] : []),
          ...(requests.length ? [`GitHub requests: ${countBy(requests, (r) => `${r.method} ${r.operationId ?? r.path} ${r.status}`)}.`] : []),
        ],
      });
    });

    let allGone = false;
    // ---- scenario 8: teardown ----
    if (wanted.has(8) && burst.length > 0) await attempt([8], 'Teardown', async () => {
      const closes: Array<{ t: Timeline; delivery: WebhookDelivery }> = [];
      for (const t of burst) closes.push({ t, delivery: (await t.repo.close(t.number)).delivery });
      log(`teardown: closing ${closes.length} PRs at once`);
      const started = performance.now();
      const closing: Timeline[] = closes.map((c) => ({ ...c.t, sent: undefined }));
      let next = 0;
      await Promise.all(Array.from({ length: 20 }, async () => {
        for (let i = next++; i < closes.length; i = next++) {
          const c = closes[i]!;
          closing[i]!.sent = performance.now();
          const answer = await post(agent, operator.webhookUrl, c.delivery);
          if (answer.status >= 300) throw new Error(`close of ${c.t.environment} answered ${answer.status}: ${answer.body}`);
        }
      }));
      const answeredMs = performance.now() - started;
      const teardownTimeout = options.quick ? 180_000 : 300_000;
      allGone = await waitFor('every burst namespace gone', teardownTimeout, operator.child, observer, () => burst.every((t) => observer.byEnvironment.get(t.environment!)?.namespaceGone !== undefined));
      const goneMs = allGone ? performance.now() - started : Number.NaN;
      const perNamespace = burst.map((t, i) => (observer.byEnvironment.get(t.environment!)?.namespaceGone ?? Number.NaN) - closing[i]!.sent!).filter(Number.isFinite);
      const s = summarize(perNamespace);
      results.push({
        scenario: 8, title: 'Teardown',
        figures: [
          { scenario: 8, name: `all ${burst.length} namespaces gone (from the first close)`, value: goneMs / 1000, unit: 's' },
          { scenario: 8, name: 'close delivery → namespace gone, median', value: s.p50, unit: 'ms' },
          { scenario: 8, name: 'close delivery → namespace gone, p95', value: s.p95, unit: 'ms' },
          { scenario: 8, name: `namespaces gone within the ${teardownTimeout / 1000} s the bench waits`, value: perNamespace.length, unit: 'count' },
          { scenario: 8, name: 'all close deliveries answered', value: answeredMs, unit: 'ms' },
        ],
        samples: { 'S8 close → namespace gone': perNamespace },
        notes: [
          `${burst.length} pull_request.closed deliveries, 20 concurrent; gone = the Namespace's DELETED watch event (after the namespace controller emptied it).`,
          ...(allGone ? [] : [`Not all gone after ${teardownTimeout / 1000} s; ${await standing(env, new Set(burst.map((t) => t.environment!)))}.`]),
        ],
      });
    });

    // ---- scenario 4 again, profiled: where the burst's time goes ----
    if (wanted.has(4) && options.profile) await attempt([4], 'Burst again, profiled', async () => {
      const before = allGone ? 'after the first burst was torn down (scenario 8)' : burst.length > 0 ? `with the first burst's ${burst.length} environments not all gone` : 'without a first burst';
      const pass = await burstPass(true, () => {});
      const count = pass.timelines.length;
      results.push({
        scenario: 4, title: 'Burst again, both CPU profilers on (where the time goes)',
        figures: [
          { scenario: 4, name: `all ${count} Ready, profiled pass (from the first delivery)`, value: pass.allReadyMs / 1000, unit: 's' },
          { scenario: 4, name: 'operator CPU seconds, profiled pass, burst → all Ready', value: pass.operatorCpuSeconds, unit: 's' },
          // The same work as the timed pass's? Its writes say.
          ...pass.figures.filter((f) => f.name === 'API writes per environment (audit log)').map((f) => ({ ...f, name: 'API writes per environment, profiled pass (audit log)' })),
        ],
        samples: {},
        notes: [
          `${count} more PRs in the same repositories, ${before}, with the operator's CPU profiler (inspector, a sample every ${operatorProfileIntervalUs / 1000} ms) and the API server's (pprof, the burst's first ${apiServerProfileSeconds} s) on. Scenario 4's figures above come from the burst without them, because a profiler costs the operator CPU.`
            + (timedPass ? ` This pass: ${pass.operatorCpuSeconds.toFixed(1)} operator CPU s, all Ready after ${(pass.allReadyMs / 1000).toFixed(1)} s; the timed one: ${timedPass.operatorCpuSeconds.toFixed(1)} s and ${(timedPass.allReadyMs / 1000).toFixed(1)} s. The machine's speed moves between two passes too: ${pass.speed.length > 0 && timedPass.speed.length > 0 ? `the cores ran the speed probe's work in ${perCoreMs(pass.speed)} ms (median, core by core) in this pass and ${perCoreMs(timedPass.speed)} ms in the timed one; ` : ''}compare them by where the machine's CPU went${pass.speed.length > 0 && timedPass.speed.length > 0 ? ' as well' : ''} (below, and in the timed pass's notes).` : ''),
          ...(pass.convergenceNote ? [pass.convergenceNote] : []),
          pass.machineCpuNote,
          // Which writes, when the count differs from the timed pass's.
          ...pass.notes.filter((n) => n.startsWith('Operator API writes')),
          ...(pass.speed.length > 0 ? [speedNote(pass.speed, 'in this pass, from the first delivery to all Ready')] : []),
          ...pass.profileNotes,
        ],
      });
    });
    stopDiagnostics();
  } finally {
    const final = (() => {
      try {
        return processUsage(operator.pid);
      } catch {
        return undefined;
      }
    })();
    if (final) log(`operator: peak RSS ${final.peakRssMb.toFixed(0)} MB, ${(final.cpuSeconds - usageAtStart.cpuSeconds).toFixed(1)} CPU s during the scenarios`);
    agent.destroy();
    await observer.stop();
    await operator.child.stop(30_000);
    await deleteNamespaces(baseline, baselineNamespaces);
    baseline.close();
    for (const d of all) await d.cleanup();
    rmSync(scratch, { recursive: true, force: true });
  }
  return results;
}

export type { ScenarioResult };
