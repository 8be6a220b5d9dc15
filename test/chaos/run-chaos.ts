// `npm run chaos [-- --seed=2 --prs=24 --kills=4 --restarts=1 --faults=8 --missed=3 --phase=25 --close-all]`:
// the operator under faults, as the product runs
// (chaos-operators.ts): two replicas with leader election, a burst of pull requests opened, pushed
// to and closed while replicas are killed with SIGKILL, the API server restarts, GitHub's answers
// are lost after the write, refused, rate-limited and slowed, and some webhooks are never sent.
// Then it waits for convergence (at most --deadline) and prints the table (chaos-verdict.ts). Bounded:
// the plan is fixed in count and time (chaos-plan.ts); one run takes a few minutes. Not part of
// `npm test`. Exit code 0 when the promises of docs/reliability.md held, 1 when not.
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import type { InjectedFault } from '../github-emulator/faults.js';
import { chaosPlan, defaultChaosOptions, type ChaosAction, type ChaosOptions, type PullRequestRef } from './chaos-plan.js';
import { compileOperator, OperatorReplica, repositoryRoot } from './chaos-operators.js';
import { chaosTable, chaosVerdict, inFlightAtRefusal, type ChaosCounts, type ChaosVerdict } from './chaos-verdict.js';
import { leaseNamespace, observe, startChaosWorld, type ChaosWorld } from './chaos-world.js';

const log = (line: string) => process.stderr.write(`chaos: ${new Date().toISOString().slice(11, 23)} ${line}\n`);

interface Run {
  world: ChaosWorld;
  replicas: OperatorReplica[];
  counts: ChaosCounts;
  faults: { kind: string; handle: InjectedFault }[];
  /** Background work (deliveries, restarts) still going. */
  pending: Set<Promise<unknown>>;
  next: number;
  /** Kills happen one after another: each waits until every replica serves again. */
  killing: Promise<void>;
  /** The audit log's position at the first close. */
  teardownMark?: number;
}

function options(): ChaosOptions & { deadlineMs: number; replicas: number } {
  const { values } = parseArgs({
    options: {
      seed: { type: 'string' },
      prs: { type: 'string' },
      kills: { type: 'string' },
      deadline: { type: 'string' },
      replicas: { type: 'string' },
      restarts: { type: 'string' },
      faults: { type: 'string' },
      missed: { type: 'string' },
      phase: { type: 'string' },
      'close-all': { type: 'boolean' },
    },
  });
  const number = (value: string | undefined, fallback: number) => (value === undefined ? fallback : Number(value));
  return {
    ...defaultChaosOptions,
    seed: number(values.seed, defaultChaosOptions.seed),
    pullRequests: number(values.prs, defaultChaosOptions.pullRequests),
    kills: number(values.kills, defaultChaosOptions.kills),
    apiServerRestarts: number(values.restarts, defaultChaosOptions.apiServerRestarts),
    githubFaults: number(values.faults, defaultChaosOptions.githubFaults),
    missedWebhooks: number(values.missed, defaultChaosOptions.missedWebhooks),
    closeAll: values['close-all'] ?? false,
    phaseMs: number(values.phase, defaultChaosOptions.phaseMs / 1000) * 1000,
    deadlineMs: number(values.deadline, 240) * 1000,
    replicas: number(values.replicas, 2),
  };
}

function replicaFlags(world: ChaosWorld): string[] {
  return [
    '--controllers=algorithm,database,preview-environment,webhook,resync',
    `--leader-election-namespace=${leaseNamespace}`,
    '--webhook-host=127.0.0.1',
    '--webhook-port=0',
    '--metrics-port=0',
    '--dashboard=false',
    `--webhook-secret-file=${world.files.webhookSecret}`,
    `--github-api-url=${world.gh.url}`,
    `--github-app-id=${world.appId}`,
    `--github-app-private-key-file=${world.files.appKey}`,
    '--preview-domain=preview.chaos.example',
    '--tls-issuer=none',
    // GitHub's pace (a write a second per credential) would make the run last many minutes; the emulator sets no secondary limit.
    '--github-throttle=false',
    '--resync-interval=60s',
    '--log-level=info',
  ];
}

/**
 * Sends a delivery to a replica a Service would route to (round robin); counts what GitHub would see.
 * One that gets no answer because its replica was killed while it was on its way is counted apart.
 */
function deliver(run: Run, send: (url: string) => Promise<{ status: number }>): void {
  const routable = run.replicas.filter((r) => r.routable);
  run.counts.deliveriesSent += 1;
  const target = routable[run.next++ % Math.max(1, routable.length)];
  const kills = target?.kills;
  const failed = () => (target && target.kills !== kills ? run.counts.deliveriesCutByKill++ : run.counts.deliveriesLost++);
  const sent = (target ? send(target.webhookUrl!) : Promise.reject(new Error('no replica serves')))
    .then((answer) => (answer.status < 300 ? run.counts.deliveriesAnswered++ : failed()))
    .catch(failed);
  track(run, sent);
}

function track(run: Run, work: Promise<unknown>): void {
  const settled = work.catch((err: Error) => log(`background: ${err.message}`)).finally(() => run.pending.delete(settled));
  run.pending.add(settled);
}

/** One action of the plan. Pull request changes are made at once; their deliveries, restarts go on in the background. */
async function act(run: Run, action: ChaosAction): Promise<void> {
  const { world } = run;
  switch (action.kind) {
    case 'github-fault': {
      const handle = world.gh.faults.inject({ route: action.spec.route, times: defaultChaosOptions.faultTimes, fault: action.spec.fault });
      run.faults.push({ kind: action.spec.fault.kind, handle });
      return;
    }
    case 'kill': {
      // In the background, one at a time: at most one replica is down (the other must serve meanwhile).
      const killed = run.killing.then(() => kill(run, action.target));
      run.killing = killed.catch(() => {});
      track(run, killed);
      return;
    }
    case 'restart-api-server':
      run.counts.apiServerRestarts += 1;
      log('restarting the API server');
      track(run, world.cluster.restartApiServer());
      return;
    default: {
      if (action.kind === 'close') run.teardownMark ??= world.cluster.audit.mark();
      const change = await changePullRequest(world, action.kind, action.pullRequest);
      if (action.deliver) deliver(run, (url) => change.delivery.deliver(url));
      else run.counts.webhooksMissed += 1;
    }
  }
}

async function changePullRequest(world: ChaosWorld, kind: 'open' | 'push' | 'close', ref: PullRequestRef) {
  const repo = world.repos[ref.repository]!;
  if (kind === 'open') {
    return repo.open({
      number: ref.number,
      files: { [`change-${ref.number}.txt`]: 'one\n' },
      author: 'alice',
      authorAssociation: 'MEMBER',
    });
  }
  if (kind === 'push') return repo.push(ref.number, { [`change-${ref.number}.txt`]: 'two\n' });
  return repo.close(ref.number);
}

/** SIGKILL of the leader (or of the other one) once every replica serves; it is started again 3 s later (chaos-operators.ts). */
async function kill(run: Run, target: 'leader' | 'follower'): Promise<void> {
  for (const until = Date.now() + 60_000; Date.now() < until && !run.replicas.every((r) => r.routable);) {
    await new Promise((r) => setTimeout(r, 200));
  }
  const leading = await Promise.all(run.replicas.map((r) => r.leading()));
  const candidates = run.replicas.filter((r, i) => r.routable && leading[i] === (target === 'leader'));
  const victim = candidates[0] ?? run.replicas.find((r) => r.routable);
  if (!victim) return;
  run.counts.kills += 1;
  log(`kill -9 of the ${target} (${run.replicas.indexOf(victim)})`);
  victim.kill();
  await new Promise((r) => setTimeout(r, 100));
  await victim.restarted();
}

/** Carries the plan out on time; returns when its last action was taken. */
async function carryOut(run: Run, plan: ChaosAction[]): Promise<number> {
  const started = Date.now();
  for (const action of plan) {
    const wait = started + action.at - Date.now();
    if (wait > 0) await new Promise((r) => setTimeout(r, wait));
    await act(run, action);
  }
  return Date.now();
}

/** Polls the end state until it converged (or the deadline); the ms it took after the last action. */
async function converge(run: Run, prs: PullRequestRef[], lastAction: number, deadlineMs: number): Promise<number | undefined> {
  while (Date.now() - lastAction < deadlineMs) {
    if (chaosVerdict(await observe(run.world, prs)).converged && run.pending.size === 0) return Date.now() - lastAction;
    await new Promise((r) => setTimeout(r, 2000));
  }
  return undefined;
}

async function main(): Promise<number> {
  const opts = options();
  const outDir = path.join(repositoryRoot, '.cache/chaos', `${new Date().toISOString().replace(/[:.]/g, '-')}-seed${opts.seed}`);
  mkdirSync(outDir, { recursive: true });
  log(`compiling the operator (tsconfig.build.json → .cache/chaos-build); results in ${outDir}`);
  await compileOperator();
  const world = await startChaosWorld(opts.repositories, outDir, (line) => log(line));
  const run: Run = { world, replicas: [], counts: emptyCounts(), faults: [], pending: new Set(), next: 0, killing: Promise.resolve() };
  try {
    for (let i = 0; i < opts.replicas; i++) {
      run.replicas.push(
        new OperatorReplica({
          identity: `replica-${i}`,
          flags: replicaFlags(world),
          kubeconfigPath: world.cluster.kubeconfigPath,
          logDir: outDir,
        }),
      );
    }
    await Promise.all(run.replicas.map((r) => r.start()));
    while (!(await Promise.all(run.replicas.map((r) => r.leading()))).some(Boolean)) await new Promise((r) => setTimeout(r, 500));
    const plan = chaosPlan(opts);
    const prs = plan.flatMap((a) => (a.kind === 'open' ? [a.pullRequest] : []));
    const auditMark = world.cluster.audit.mark();
    log(`${plan.length} actions: ${prs.length} pull requests, ${opts.kills} kills, ${opts.apiServerRestarts} API server restart(s)`);
    const lastAction = await carryOut(run, plan);
    run.counts.convergeMs = await converge(run, prs, lastAction, opts.deadlineMs);
    // A few more seconds: a duplicate comment or Deployment made late would show now.
    await new Promise((r) => setTimeout(r, 5000));
    const verdict = chaosVerdict(await observe(world, prs));
    await finishCounts(run, auditMark, outDir);
    return report(run, verdict, prs.length, outDir);
  } finally {
    await Promise.all(run.replicas.map((r) => r.stop()));
    await world.stop();
  }
}

function emptyCounts(): ChaosCounts {
  return {
    kills: 0,
    exits: 0,
    apiServerRestarts: 0,
    githubFaults: {},
    deliveriesSent: 0,
    deliveriesAnswered: 0,
    deliveriesLost: 0,
    deliveriesCutByKill: 0,
    webhooksMissed: 0,
    forbiddenWrites: 0,
    teardownWrites: 0,
    githubViolations: 0,
    githubViolationsInFlight: 0,
    convergeMs: undefined,
  };
}

async function finishCounts(run: Run, auditMark: number, outDir: string): Promise<void> {
  for (const { kind, handle } of run.faults) run.counts.githubFaults[kind] = (run.counts.githubFaults[kind] ?? 0) + handle.applied;
  run.counts.exits = run.replicas.reduce((sum, r) => sum + r.exits, 0);
  await run.world.cluster.audit.settle();
  const writes = run.world.cluster.audit.writes(auditMark, { userAgent: 'preview-operator' });
  const forbidden = writes.filter((w) => w.responseStatus?.code === 403);
  run.counts.forbiddenWrites = forbidden.length;
  const refused = forbidden.map(
    (w) => `${w.requestReceivedTimestamp} ${w.verb} ${w.objectRef?.resource}/${w.objectRef?.namespace}/${w.objectRef?.name}`,
  );
  writeFileSync(path.join(outDir, 'forbidden-writes.txt'), refused.join('\n'));
  const teardown = run.world.cluster.audit.writes(run.teardownMark ?? auditMark, { userAgent: 'preview-operator' });
  run.counts.teardownWrites = teardown.length;
  const byKind = new Map<string, number>();
  for (const w of teardown) {
    const what = `${w.verb} ${w.objectRef?.resource}${w.objectRef?.subresource ? `/${w.objectRef.subresource}` : ''} ${w.responseStatus?.code}`;
    byKind.set(what, (byKind.get(what) ?? 0) + 1);
  }
  const tally = [...byKind].sort((a, b) => b[1] - a[1]).map(([what, n]) => `${n} ${what}`);
  writeFileSync(path.join(outDir, 'teardown-writes.txt'), tally.join('\n'));
  const violations = run.world.gh.takeViolations();
  run.counts.githubViolations = violations.length;
  run.counts.githubViolationsInFlight = violations.filter((v) => inFlightAtRefusal(v.message)).length;
  const lines = violations.map(
    (v) => `${new Date(v.at).toISOString()} [${v.kind}] ${v.method} ${v.path} (${v.operationId ?? '-'}): ${v.message}`,
  );
  writeFileSync(path.join(outDir, 'github-violations.txt'), lines.join('\n'));
}

function report(run: Run, verdict: ChaosVerdict, pullRequests: number, outDir: string): number {
  const table = chaosTable(run.counts, verdict, pullRequests);
  writeFileSync(path.join(outDir, 'table.md'), `${table.join('\n')}\n`);
  process.stdout.write(`${table.join('\n')}\n`);
  const { counts } = run;
  const ignoredWaits = counts.githubViolations - counts.githubViolationsInFlight;
  const held =
    verdict.converged &&
    verdict.maxComments <= 1 &&
    verdict.maxDeploymentsPerSha <= 1 &&
    counts.deliveriesLost === 0 &&
    counts.forbiddenWrites === 0 &&
    ignoredWaits === 0;
  log(held ? 'every promise held' : 'a promise did not hold (see the table)');
  return held ? 0 : 1;
}

process.exit(await main());
