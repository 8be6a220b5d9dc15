// The chaos run's schedule, as data: when each pull request is opened, pushed to and closed, which
// of those webhooks GitHub "loses" (never sent), when a replica is killed with SIGKILL, when the API
// server restarts and which GitHub faults are armed. Pure and seeded, so a run can be repeated and
// its plan tested; run-chaos.ts carries it out.

export interface ChaosOptions {
  /** Pull requests opened (spread over the repositories). */
  pullRequests: number;
  repositories: number;
  /** SIGKILLs of an operator replica, alternately the leader and the other one. */
  kills: number;
  apiServerRestarts: number;
  /** GitHub fault rules armed (each hits `faultTimes` requests). */
  githubFaults: number;
  faultTimes: number;
  /** Webhooks never delivered (the resync must repair them). */
  missedWebhooks: number;
  /** Milliseconds between two deliveries of one phase. */
  spacingMs: number;
  /** Milliseconds from the start of one phase (open, push, close) to the next. */
  phaseMs: number;
  /** Close every pull request (a teardown of them all), not one in two. */
  closeAll: boolean;
  seed: number;
}

export const defaultChaosOptions: ChaosOptions = {
  pullRequests: 24,
  repositories: 3,
  kills: 4,
  apiServerRestarts: 1,
  githubFaults: 8,
  faultTimes: 2,
  missedWebhooks: 3,
  spacingMs: 150,
  phaseMs: 25_000,
  closeAll: false,
  seed: 1,
};

export interface PullRequestRef {
  repository: number;
  number: number;
}

export type GitHubFaultSpec =
  | { route: string; fault: { kind: 'lost-answer'; status: 502 | 504 } }
  | { route: string; fault: { kind: 'server-error'; status: 500 | 502 | 503 } }
  | { route: string; fault: { kind: 'too-many-requests'; status: 429 | 403; retryAfterSeconds: number } }
  | { route: string; fault: { kind: 'delay'; ms: number } };

export type ChaosAction =
  | { at: number; kind: 'open' | 'push' | 'close'; pullRequest: PullRequestRef; deliver: boolean }
  | { at: number; kind: 'kill'; target: 'leader' | 'follower' }
  | { at: number; kind: 'restart-api-server' }
  | { at: number; kind: 'github-fault'; spec: GitHubFaultSpec };

/** The faults, in the order they are armed: the lost answers first (the creates are the dangerous ones). */
export const faultCatalogue: readonly GitHubFaultSpec[] = [
  { route: 'issues/create-comment', fault: { kind: 'lost-answer', status: 502 } },
  { route: 'repos/create-deployment', fault: { kind: 'lost-answer', status: 504 } },
  { route: 'checks/create', fault: { kind: 'lost-answer', status: 502 } },
  { route: 'repos/get-content', fault: { kind: 'server-error', status: 502 } },
  { route: 'issues/update-comment', fault: { kind: 'too-many-requests', status: 429, retryAfterSeconds: 2 } },
  { route: 'pulls/list', fault: { kind: 'server-error', status: 503 } },
  { route: 'repos/create-deployment-status', fault: { kind: 'too-many-requests', status: 403, retryAfterSeconds: 1 } },
  { route: 'repos/get-content', fault: { kind: 'delay', ms: 3000 } },
];

/** A small seeded generator (mulberry32): the same seed, the same plan. */
export function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** The whole schedule, sorted by time (ms from the start of the run). */
export function chaosPlan(options: ChaosOptions): ChaosAction[] {
  const random = seededRandom(options.seed);
  const prs: PullRequestRef[] = Array.from({ length: options.pullRequests }, (_, i) => ({
    repository: i % options.repositories,
    number: Math.floor(i / options.repositories) + 1,
  }));
  const pushed = prs.filter((_, i) => i % 3 !== 2);
  const closed = prs.filter((_, i) => options.closeAll || i % 2 === 1);
  const events: ChaosAction[] = [
    ...phase('open', prs, 0, options.spacingMs),
    ...phase('push', pushed, options.phaseMs, options.spacingMs),
    ...phase('close', closed, 2 * options.phaseMs, options.spacingMs),
  ];
  missWebhooks(events, options.missedWebhooks, random);
  const phaseOf = (k: number) => (k % 3) * options.phaseMs;
  const during = (start: number, count: number) => start + Math.floor(random() * Math.max(1, count * options.spacingMs));
  for (let k = 0; k < options.kills; k++) {
    const start = phaseOf(k);
    const count = [prs, pushed, closed][k % 3]!.length;
    events.push({ at: during(start, count), kind: 'kill', target: k % 2 === 0 ? 'leader' : 'follower' });
  }
  for (let k = 0; k < options.apiServerRestarts; k++)
    events.push({ at: during(phaseOf(k + 1), pushed.length), kind: 'restart-api-server' });
  // Armed as the opens and the pushes start: those make the comments, Deployments and check runs.
  for (let k = 0; k < options.githubFaults; k++) {
    events.push({ at: (k % 2) * options.phaseMs, kind: 'github-fault', spec: faultCatalogue[k % faultCatalogue.length]! });
  }
  return events.sort((a, b) => a.at - b.at || order(a) - order(b));
}

function phase(kind: 'open' | 'push' | 'close', prs: PullRequestRef[], start: number, spacingMs: number): ChaosAction[] {
  return prs.map((pullRequest, i) => ({ at: start + i * spacingMs, kind, pullRequest, deliver: true }));
}

/** Marks `count` deliveries as never sent, at most one per pull request. */
function missWebhooks(events: ChaosAction[], count: number, random: () => number): void {
  const deliveries = events.filter((e): e is Extract<ChaosAction, { deliver: boolean }> => 'deliver' in e);
  const chosen = new Set<string>();
  for (let tries = 0; chosen.size < count && tries < 1000; tries++) {
    const event = deliveries[Math.floor(random() * deliveries.length)]!;
    const key = `${event.pullRequest.repository}/${event.pullRequest.number}`;
    if (chosen.has(key)) continue;
    chosen.add(key);
    event.deliver = false;
  }
}

/** At the same instant: faults are armed first, then deliveries, then kills and restarts. */
function order(action: ChaosAction): number {
  return action.kind === 'github-fault' ? 0 : action.kind === 'kill' || action.kind === 'restart-api-server' ? 2 : 1;
}
