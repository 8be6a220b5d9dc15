// Creates a GitHub object exactly once. A create is not idempotent: when its answer is lost (a
// 502 from a proxy after GitHub wrote the comment, a connection cut mid-answer), sending it again
// can make a second object, and the second is the one whose id the caller keeps. So a create is
// never sent again blindly: after an unknown outcome the object is looked up by what marks it
// (the sticky comment's hidden marker, a Deployment's ref + SHA + environment, a check run's head
// SHA + name + external id) and adopted when found; only when it is not there is the create sent
// again, after the client's retry backoff (which also gives GitHub's lists time to show it).
import { setTimeout as sleep } from 'node:timers/promises';
import { isOutcomeUnknown, type RetryPolicy } from './octokit-retry.js';

export interface CreateOnce<T> {
  /** The object if GitHub has it already (by its marker), else undefined. */
  find(): Promise<T | undefined>;
  /** Sends the create once. */
  create(): Promise<T>;
}

const noRetries: RetryPolicy = { retries: 0, delayMs: () => 0 };

/**
 * `create()`, and after an unknown outcome `find()` before anything else: what it finds is the
 * result. A refusal (4xx) is thrown at once; after the client's retries, the last unknown
 * outcome is thrown, once a last look found nothing.
 */
export async function createOnce<T>(client: { retryPolicy?: RetryPolicy }, steps: CreateOnce<T>): Promise<T> {
  const policy = client.retryPolicy ?? noRetries;
  for (let attempt = 0; ; attempt++) {
    try {
      return await steps.create();
    } catch (err) {
      if (!isOutcomeUnknown(err)) throw err;
      const last = attempt >= policy.retries;
      if (!last) await sleep(policy.delayMs(attempt));
      const found = await steps.find();
      if (found !== undefined) return found;
      if (last) throw err;
    }
  }
}
