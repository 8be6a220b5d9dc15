// Whether CI is done with a commit, from what GitHub reports about it: check runs (Apps),
// check suites (one per App and commit) and commit statuses (older integrations). Pure: the
// gate fetches, this decides, so every rule here is unit-tested without GitHub.

/** Which checks a new SHA must pass before it is deployed. */
export type ChecksRequirement =
  /** No gate: every SHA deploys at once (the default). */
  | { mode: 'none' }
  /** These check-run names or commit-status contexts (case-insensitive) must each succeed. */
  | { mode: 'named'; checks: readonly string[] }
  /**
   * Every check run, every check suite that has runs, and every commit status must succeed.
   * A commit nothing has reported on yet passes: GitHub cannot tell "no CI" from "CI has
   * not started", so repositories whose CI starts late should name their checks.
   */
  | { mode: 'all' };

export type ChecksState = 'passed' | 'pending' | 'failed';

export interface ChecksVerdict {
  state: ChecksState;
  /** Checks that failed (any failure makes the verdict `failed`, even while others still run). */
  failing: string[];
  /** Checks still running, queued, or (named mode) not reported yet. */
  pending: string[];
  /** Checks that succeeded. */
  passed: string[];
  /** One line for a status condition or the PR comment, e.g. `waiting for build, test`. */
  message: string;
}

export interface CheckRunFact {
  name: string;
  /** GitHub's `status`: queued, in_progress, completed, waiting, requested, pending. */
  status: string;
  conclusion: string | null;
  suiteId: number | undefined;
  appSlug: string | undefined;
}

export interface CheckSuiteFact {
  id: number;
  status: string | null;
  conclusion: string | null;
  latestCheckRunsCount: number;
  appSlug: string | undefined;
}

export interface CommitStatusFact {
  context: string;
  /** error, failure, pending, success. */
  state: string;
}

export interface CommitChecks {
  runs: CheckRunFact[];
  suites: CheckSuiteFact[];
  statuses: CommitStatusFact[];
}

type Outcome = 'passed' | 'pending' | 'failed';

// GitHub's own rule for required checks: success, neutral and skipped pass; every other
// conclusion (failure, cancelled, timed_out, action_required, stale, startup_failure) blocks.
const passingConclusions = new Set(['success', 'neutral', 'skipped']);

function runOutcome(run: { status: string | null; conclusion: string | null }): Outcome {
  if (run.status !== 'completed') return 'pending';
  return run.conclusion !== null && passingConclusions.has(run.conclusion) ? 'passed' : 'failed';
}

function statusOutcome(status: CommitStatusFact): Outcome {
  if (status.state === 'success') return 'passed';
  if (status.state === 'pending') return 'pending';
  return 'failed';
}

/**
 * The verdict on a commit. `ignore` names checks the operator itself reports (its own
 * "preview-operator" check run or status): waiting for them would wait for itself.
 */
export function checksVerdict(requirement: ChecksRequirement, facts: CommitChecks, ignore: readonly string[] = []): ChecksVerdict {
  const ignored = new Set(ignore.map((n) => n.toLowerCase()));
  const runs = facts.runs.filter((r) => !ignored.has(r.name.toLowerCase()));
  const statuses = facts.statuses.filter((s) => !ignored.has(s.context.toLowerCase()));
  const outcomes = new Map<string, Outcome>();
  // A name reported twice (a re-run, or by two Apps) counts at its worst.
  const record = (name: string, outcome: Outcome) => {
    const previous = outcomes.get(name);
    const rank = { passed: 0, pending: 1, failed: 2 } as const;
    if (!previous || rank[outcome] > rank[previous]) outcomes.set(name, outcome);
  };

  if (requirement.mode === 'none') return verdict(new Map());

  if (requirement.mode === 'named') {
    for (const wanted of requirement.checks) {
      const key = wanted.toLowerCase();
      const matches = [
        ...runs.filter((r) => r.name.toLowerCase() === key).map(runOutcome),
        ...statuses.filter((s) => s.context.toLowerCase() === key).map(statusOutcome),
      ];
      // Not reported yet: CI may not have picked the commit up, so wait rather than pass.
      if (matches.length === 0) record(wanted, 'pending');
      for (const outcome of matches) record(wanted, outcome);
    }
    return verdict(outcomes);
  }

  for (const run of runs) record(run.name, runOutcome(run));
  for (const status of statuses) record(status.context, statusOutcome(status));
  const ownSuites = new Set(facts.runs.filter((r) => ignored.has(r.name.toLowerCase())).map((r) => r.suiteId));
  const suitesWithVisibleRuns = new Set(runs.map((r) => r.suiteId));
  for (const suite of facts.suites) {
    // GitHub creates a suite for every App with checks permission on every push; one with
    // no runs stays `queued` for ever, so it is not a check anybody runs.
    if (suite.latestCheckRunsCount === 0) continue;
    // Suites whose runs were judged one by one above, and the operator's own suite.
    if (suitesWithVisibleRuns.has(suite.id) || ownSuites.has(suite.id)) continue;
    record(`check suite of ${suite.appSlug ?? `suite ${suite.id}`}`, runOutcome(suite));
  }
  return verdict(outcomes);
}

function verdict(outcomes: Map<string, Outcome>): ChecksVerdict {
  const pick = (o: Outcome) =>
    [...outcomes]
      .filter(([, x]) => x === o)
      .map(([n]) => n)
      .sort();
  const failing = pick('failed');
  const pending = pick('pending');
  const passed = pick('passed');
  const state: ChecksState = failing.length > 0 ? 'failed' : pending.length > 0 ? 'pending' : 'passed';
  const message =
    state === 'failed'
      ? `checks failed: ${failing.join(', ')}`
      : state === 'pending'
        ? `waiting for ${pending.join(', ')}`
        : passed.length > 0
          ? `checks passed: ${passed.join(', ')}`
          : 'no checks required';
  return { state, failing, pending, passed, message };
}
