// Fault injection: the next N requests that match a route get a failure instead of (or,
// for a delay, before; for a lost answer, after performing) the normal answer.

export type Fault =
  /** A GitHub-side failure; nothing is changed. */
  | { kind: 'server-error'; status?: 500 | 502 | 503 | 504 }
  /**
   * GitHub's secondary rate limit: 403 (or 429) with the documented message and, when
   * given, `retry-after` seconds the client must wait.
   */
  | { kind: 'secondary-rate-limit'; status?: 403 | 429; retryAfterSeconds?: number }
  /**
   * A rate limit that does not say "secondary rate limit": a plain 429 Too Many Requests, or a
   * 403 in an older GitHub Enterprise Server's words ("abuse detection mechanism"), with
   * `retry-after` when given.
   */
  | { kind: 'too-many-requests'; status?: 429 | 403; retryAfterSeconds?: number }
  /**
   * The lost answer: GitHub performs the request (a create creates), then a proxy in front of
   * it answers 502 (or 504) with its own HTML page, so the client cannot know the write happened.
   */
  | { kind: 'lost-answer'; status?: 502 | 504 }
  /** The normal answer, sent after `ms`. */
  | { kind: 'delay'; ms: number };

export interface FaultRule {
  /**
   * Which requests: an operationId (`issues/create-comment`), `METHOD /path/template`
   * (`POST /repos/{owner}/{repo}/issues/{issue_number}/comments`), or a list of them.
   * Omitted: every request.
   */
  route?: string | string[];
  /** Only requests to this repository (`/repos/{owner}/{repo}/…`), so concurrent tests do not take each other's faults. */
  repository?: { owner: string; name: string };
  /** How many matching requests get the fault (default 1). */
  times?: number;
  fault: Fault;
}

export interface InjectedFault {
  /** Matching requests still to be faulted. */
  readonly remaining: number;
  /** How many requests got this fault so far. */
  readonly applied: number;
  cancel(): void;
}

interface ActiveRule {
  routes: string[] | undefined;
  repository: string | undefined;
  remaining: number;
  applied: number;
  fault: Fault;
}

export class FaultInjector {
  private readonly rules: ActiveRule[] = [];

  inject(rule: FaultRule): InjectedFault {
    const active: ActiveRule = {
      routes: rule.route === undefined ? undefined : [rule.route].flat(),
      repository: rule.repository && `${rule.repository.owner}/${rule.repository.name}`.toLowerCase(),
      remaining: rule.times ?? 1,
      applied: 0,
      fault: rule.fault,
    };
    this.rules.push(active);
    return {
      get remaining() {
        return active.remaining;
      },
      get applied() {
        return active.applied;
      },
      cancel: () => {
        active.remaining = 0;
      },
    };
  }

  /** The fault for this request, consuming one use of the first matching rule. */
  take(operationId: string, method: string, pathTemplate: string, pathParams: Record<string, string>): Fault | undefined {
    const signature = `${method.toUpperCase()} ${pathTemplate}`;
    const repository = `${pathParams.owner}/${pathParams.repo}`.toLowerCase();
    const rule = this.rules.find(
      (r) =>
        r.remaining > 0 &&
        (!r.routes || r.routes.some((x) => x === operationId || x === signature)) &&
        (!r.repository || r.repository === repository),
    );
    if (!rule) return undefined;
    rule.remaining -= 1;
    rule.applied += 1;
    return rule.fault;
  }

  clear(): void {
    this.rules.length = 0;
  }
}
