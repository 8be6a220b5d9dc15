// Taking a maintainer's approval away from an untrusted pull request after a new push:
// the approval label is removed on GitHub off the request path (the webhook has answered
// long before), retried with backoff, since while the label stays a resync would see the
// pull request as approved again.
import { systemClock, type Clock } from '../../kube/clock.js';
import { silentLogger, type Logger } from '../../kube/logger.js';

/**
 * Removes a label from a pull request on GitHub. Must resolve when the label is already
 * gone (GitHub answers 404), since removal is the goal, not the request.
 */
export type RemoveLabel = (owner: string, repo: string, number: number, label: string) => Promise<void>;

export interface ApprovalRevocation {
  owner: string;
  repo: string;
  number: number;
  label: string;
}

export interface ApprovalRevokerOptions {
  removeLabel: RemoveLabel;
  logger?: Logger;
  clock?: Clock;
  /** Attempts per revocation (default 6: about a minute with the default backoff). */
  attempts?: number;
  /** First retry delay; doubles each time (default 1 s). */
  initialDelayMs?: number;
  maxDelayMs?: number;
}

export class ApprovalRevoker {
  private readonly removeLabel: RemoveLabel;
  private readonly logger: Logger;
  private readonly clock: Clock;
  private readonly attempts: number;
  private readonly initialDelayMs: number;
  private readonly maxDelayMs: number;
  private readonly running = new Map<string, Promise<void>>();
  private readonly timers = new Set<{ handle: unknown; wake: () => void }>();
  private closed = false;
  /** Revocations that gave up after every attempt failed (for metrics and alerts). */
  failures = 0;

  constructor(options: ApprovalRevokerOptions) {
    this.removeLabel = options.removeLabel;
    this.logger = options.logger ?? silentLogger;
    this.clock = options.clock ?? systemClock;
    this.attempts = options.attempts ?? 6;
    this.initialDelayMs = options.initialDelayMs ?? 1000;
    this.maxDelayMs = options.maxDelayMs ?? 30_000;
  }

  /** Schedules the removal and returns at once; a removal already under way for the same label is not repeated. */
  revoke(target: ApprovalRevocation): void {
    if (this.closed) return;
    const key = `${target.owner}/${target.repo}#${target.number}:${target.label}`.toLowerCase();
    if (this.running.has(key)) return;
    const task = this.run(target).finally(() => this.running.delete(key));
    this.running.set(key, task);
  }

  /** Removals not finished yet. */
  get pending(): number {
    return this.running.size;
  }

  /** Resolves once every scheduled removal has finished (succeeded or given up). */
  async idle(): Promise<void> {
    while (this.running.size > 0) await Promise.all(this.running.values());
  }

  /** Stops retrying (process shutdown); removals in flight end after their current attempt. */
  async close(): Promise<void> {
    this.closed = true;
    for (const timer of this.timers) {
      this.clock.clearTimeout(timer.handle);
      timer.wake();
    }
    await this.idle();
  }

  private async run(target: ApprovalRevocation): Promise<void> {
    const where = { repository: `${target.owner}/${target.repo}`, pullRequest: target.number, label: target.label };
    let delay = this.initialDelayMs;
    for (let attempt = 1; ; attempt++) {
      try {
        await this.removeLabel(target.owner, target.repo, target.number, target.label);
        this.logger.info({ ...where, attempt }, 'approval removed after a new push');
        return;
      } catch (err) {
        if (attempt < this.attempts && !this.closed) {
          this.logger.warn({ ...where, attempt, err, retryInMs: delay }, 'removing the approval label failed; retrying');
          await this.sleep(delay);
          delay = Math.min(delay * 2, this.maxDelayMs);
        }
        if (attempt >= this.attempts || this.closed) {
          this.failures += 1;
          this.logger.error(
            { ...where, attempt, err },
            'could not remove the approval label: the pull request still looks approved on GitHub',
          );
          return;
        }
      }
    }
  }

  private sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const timer = {
        handle: undefined as unknown,
        wake: () => {
          this.timers.delete(timer);
          resolve();
        },
      };
      timer.handle = this.clock.setTimeout(timer.wake, ms);
      this.timers.add(timer);
    });
  }
}
