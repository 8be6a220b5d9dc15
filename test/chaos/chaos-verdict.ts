// What a chaos run came to, from what the run saw (pure): which open pull requests lack their
// environment at their head commit, which namespaces outlive their pull request, how many sticky
// comments each pull request got and how many GitHub Deployments each commit — and the table.

export interface ObservedPullRequest {
  /** `owner/name#number`. */
  key: string;
  /** The PreviewEnvironment (and namespace) name it maps to. */
  environment: string;
  open: boolean;
  headSha: string;
  /** Sticky comments (those with its marker) on the pull request. */
  comments: number;
  /** GitHub Deployments of its environment, per commit SHA. */
  deploymentsBySha: Record<string, number>;
}

export interface ObservedEnvironment {
  name: string;
  headSha?: string;
  phase?: string;
  deployedSha?: string;
}

export interface ChaosObservation {
  pullRequests: ObservedPullRequest[];
  environments: ObservedEnvironment[];
  /** Namespaces labelled as a preview's. */
  namespaces: string[];
}

export interface ChaosVerdict {
  /** Open pull requests whose environment is not Ready at their head commit. */
  missing: string[];
  /** Preview namespaces (or environments) of closed pull requests, or of none. */
  leaked: string[];
  /** Pull requests with more than one sticky comment; and the most any had. */
  extraComments: string[];
  maxComments: number;
  /** Commits with more than one Deployment; and the most any had. */
  extraDeployments: string[];
  maxDeploymentsPerSha: number;
  converged: boolean;
}

export function chaosVerdict(o: ChaosObservation): ChaosVerdict {
  const environments = new Map(o.environments.map((e) => [e.name, e]));
  const byName = new Map(o.pullRequests.map((p) => [p.environment, p]));
  const missing = o.pullRequests.filter((p) => p.open && !readyAt(environments.get(p.environment), p.headSha)).map((p) => p.key);
  const orphan = (name: string) => !byName.get(name)?.open;
  const leaked = [...new Set([...o.namespaces.filter(orphan), ...o.environments.map((e) => e.name).filter(orphan)])].sort();
  const extraComments = o.pullRequests.filter((p) => p.comments > 1).map((p) => `${p.key} (${p.comments})`);
  const extraDeployments = o.pullRequests.flatMap((p) =>
    Object.entries(p.deploymentsBySha)
      .filter(([, count]) => count > 1)
      .map(([sha, count]) => `${p.key}@${sha.slice(0, 7)} (${count})`),
  );
  const counts = o.pullRequests.flatMap((p) => Object.values(p.deploymentsBySha));
  return {
    missing,
    leaked,
    extraComments,
    extraDeployments,
    maxComments: Math.max(0, ...o.pullRequests.map((p) => p.comments)),
    maxDeploymentsPerSha: Math.max(0, ...counts),
    converged: missing.length === 0 && leaked.length === 0,
  };
}

function readyAt(env: ObservedEnvironment | undefined, sha: string): boolean {
  return env?.phase === 'Ready' && env.headSha === sha && env.deployedSha === sha;
}

/** What was done to the operator during the run, counted as it happened. */
export interface ChaosCounts {
  kills: number;
  /** Replicas that exited by themselves (e.g. on a lost lease), each started again. */
  exits: number;
  apiServerRestarts: number;
  /** Faults GitHub's emulator applied, by kind. */
  githubFaults: Record<string, number>;
  deliveriesSent: number;
  /** Answered 2xx. */
  deliveriesAnswered: number;
  /** Sent to a replica that was serving and got no answer (refused, reset) or a 5xx: lost, as GitHub does not redeliver. */
  deliveriesLost: number;
  /** No answer because the replica was killed while the delivery was on its way to it (the resync repairs it). */
  deliveriesCutByKill: number;
  /** Never sent, on purpose: the webhooks GitHub "lost". */
  webhooksMissed: number;
  /** Operator writes the API server refused with 403 (e.g. into a terminating namespace). */
  forbiddenWrites: number;
  /** Operator writes from the first close on (the teardown and what went on beside it). */
  teardownWrites: number;
  /** Requests the GitHub emulator found against GitHub's rules (e.g. sent while told to wait). */
  githubViolations: number;
  /** Of those, requests inside a retry-after wait sent before the refusal could be read (see `inFlightAtRefusal`). */
  githubViolationsInFlight: number;
  /** From the last scheduled action to convergence; undefined when it never converged. */
  convergeMs: number | undefined;
}

/**
 * Whether a violation is a request sent before the operator could have read GitHub's refusal of
 * another one (and its retry-after): within `withinMs` of the refusal. Requests run concurrently,
 * and on a loaded machine a response waits a few hundred ms for the event loop (measured: up to
 * 240 ms); a request later than that ignored the wait. The emulator's message says how long
 * before the end of the wait it was sent.
 */
export function inFlightAtRefusal(message: string, withinMs = 500): boolean {
  const match = /sent (\d+) ms before the end of the wait GitHub asked for \(retry-after: (\d+)\)/.exec(message);
  return !!match && Number(match[2]) * 1000 - Number(match[1]) < withinMs;
}

function violations(counts: ChaosCounts): string {
  if (counts.githubViolations === 0) return '0';
  const inFlight = counts.githubViolationsInFlight;
  return `${counts.githubViolations}${inFlight ? ` (${inFlight} sent within 0.5 s of a refusal, before it could be read)` : ''}`;
}

/** The table of one run, as Markdown rows. */
export function chaosTable(counts: ChaosCounts, verdict: ChaosVerdict, pullRequests: number): string[] {
  const faults =
    Object.entries(counts.githubFaults)
      .sort()
      .map(([kind, n]) => `${n} ${kind}`)
      .join(', ') || 'none';
  const list = (items: string[]) =>
    items.length ? `${items.length}: ${items.slice(0, 4).join(', ')}${items.length > 4 ? ', …' : ''}` : '0';
  const rows: [string, string][] = [
    ['pull requests (opened, pushed, closed)', String(pullRequests)],
    ['kill -9 of a replica', String(counts.kills)],
    ['replicas that exited by themselves', String(counts.exits)],
    ['API server restarts', String(counts.apiServerRestarts)],
    ['GitHub faults injected', faults],
    ['webhooks never sent (missed)', String(counts.webhooksMissed)],
    ['deliveries sent / answered 2xx', `${counts.deliveriesSent} / ${counts.deliveriesAnswered}`],
    ['deliveries lost (no answer from a serving replica)', String(counts.deliveriesLost)],
    ['deliveries cut off by a kill -9 of their replica', String(counts.deliveriesCutByKill)],
    ['missing environments', list(verdict.missing)],
    ['leaked namespaces', list(verdict.leaked)],
    ['comments per PR (most)', `${verdict.maxComments}${verdict.extraComments.length ? ` — ${list(verdict.extraComments)}` : ''}`],
    [
      'Deployments per SHA (most)',
      `${verdict.maxDeploymentsPerSha}${verdict.extraDeployments.length ? ` — ${list(verdict.extraDeployments)}` : ''}`,
    ],
    ['writes refused with 403', String(counts.forbiddenWrites)],
    ['operator writes from the first close on', String(counts.teardownWrites)],
    ['GitHub rule violations', violations(counts)],
    ['time to converge', counts.convergeMs === undefined ? 'did not converge' : `${(counts.convergeMs / 1000).toFixed(1)} s`],
  ];
  return ['| | |', '|---|---|', ...rows.map(([what, value]) => `| ${what} | ${value} |`)];
}
