// The GitHub webhook endpoint's protocol, independent of the HTTP framework: the body is
// read with a limit (413), its signature checked on the raw bytes (401), and only then is
// anything parsed — content type (415), JSON (400), headers (400). A delivery id seen
// before is answered 200 with no effect; `ping` 200; events the operator does not use 202.
// None of these touch the cluster. A `pull_request` delivery that asks for a change is
// answered 202 `accepted` as soon as its intent is queued: the EnvironmentWriter makes the
// one write after the answer and retries it while the cluster is unavailable, and the resync
// repairs a write lost with the process. One older than what its environment records (a
// captured delivery replayed under a new id, or a late one) is answered 200 `stale` and
// changes nothing: a 2xx, so GitHub does not retry it (see environment-recency.ts). When the
// writer is full (an API server away for long under a flood of deliveries) the delivery is
// answered 503 `unavailable`: GitHub shows it failed, it can be redelivered, the resync repairs it.
import type { IncomingHttpHeaders, IncomingMessage } from 'node:http';
import { ByteBudget } from '../byte-budget.js';
import { silentLogger, type Logger } from '../kube/logger.js';
import type { PolicyConfig } from '../policy/policy-config.js';
import type { ApprovalRevoker } from '../github/reporting/approval-revoker.js';
import { DeliveryDedupe } from './delivery-dedupe.js';
import { WriterFullError, type EnvironmentWriter } from './environment-writer.js';
import { PayloadError, type PullRequestFactsOptions } from './pull-request-payload.js';
import {
  BodyBudgetError,
  BodyTimeoutError,
  BodyTooLargeError,
  defaultBodyDeadlineMs,
  defaultMaxBodyBytes,
  defaultMaxBodyBytesInFlight,
  readWebhookBody,
} from './webhook-body.js';
import { CheckRerunHandler, rerunEvents, type CheckRerunOptions } from './webhook-check-rerun.js';
import {
  PullRequestEventHandler,
  type PullRequestHandlerOptions,
  type PullRequestOutcome,
  type PullRequestResult,
} from './webhook-pull-request.js';
import { signatureMatches } from './webhook-signature.js';

export type WebhookResult =
  | PullRequestResult
  | 'pong'
  | 'duplicate'
  | 'too-large'
  | 'unauthorized'
  | 'unsupported-media-type'
  | 'bad-request'
  | 'unavailable'
  | 'failed';

/** The answer to send: status, JSON body, and headers. */
export interface WebhookAnswer {
  status: number;
  body: {
    result: WebhookResult;
    delivery?: string;
    event?: string;
    action?: string;
    environment?: string;
    op?: PullRequestOutcome['op'];
    reason?: string;
    approvalRevoked?: boolean;
  };
  headers: Record<string, string>;
}

/** One handled request, for metrics and logs. */
export interface WebhookOutcome {
  status: number;
  result: WebhookResult;
  /** As the request named it, cut to `headerExcerptLength` (the header is not signed). */
  delivery?: string;
  /** As the request named it, cut to `headerExcerptLength`: label metrics with `webhookEventLabel`. */
  event?: string;
  action?: string;
  durationMs: number;
}

export interface WebhookReceiverOptions {
  /** The webhook secret; several during a rotation (any of them verifies). */
  secret: string | readonly string[];
  /** Where accepted deliveries' intents go; it writes them after the answer. */
  writer: EnvironmentWriter;
  /** The policy, or a function returning the current one (reloads apply to the next delivery). */
  policy: PolicyConfig | (() => PolicyConfig);
  approvals: ApprovalRevoker;
  /** Larger bodies are refused with 413 (default 1 MiB; GitHub's own cap is 25 MB). */
  maxBodyBytes?: number;
  /** The bodies being read at once, all together; a delivery that would pass it is answered 503 (default 32 MiB). */
  maxBodyBytesInFlight?: number;
  /** A body not whole this long after its headers is answered 408 and its bytes let go (default 10 s, GitHub's own wait). */
  bodyDeadlineMs?: number;
  /** Remembers delivery ids (default: one hour, at most 10,000 ids). */
  dedupe?: DeliveryDedupe;
  cloneUrl?: PullRequestFactsOptions['cloneUrl'];
  /** Told of every spec queued for writing (see PullRequestHandlerOptions). */
  onUpsert?: PullRequestHandlerOptions['onUpsert'];
  /** The PreviewEnvironments as the cluster records them (the manager's informer): older deliveries are `stale`. */
  environments?: PullRequestHandlerOptions['environments'] & CheckRerunOptions['environments'];
  /** Asks an environment to deploy its head commit again (`check_run` / `check_suite` `rerequested`); without it those are unused. */
  requestRerun?: CheckRerunOptions['requestRerun'];
  logger?: Logger;
  /** Called once per request after its answer is decided. */
  observe?: (outcome: WebhookOutcome) => void;
}

export class WebhookReceiver {
  readonly maxBodyBytes: number;
  private readonly bodies: ByteBudget;
  private readonly bodyDeadlineMs: number;
  private readonly secrets: readonly string[];
  private readonly dedupe: DeliveryDedupe;
  private readonly pullRequests: PullRequestEventHandler;
  private readonly reruns: CheckRerunHandler | undefined;
  private readonly logger: Logger;
  private readonly observe: (outcome: WebhookOutcome) => void;

  constructor(options: WebhookReceiverOptions) {
    this.secrets = typeof options.secret === 'string' ? [options.secret] : [...options.secret];
    if (this.secrets.length === 0 || this.secrets.some((s) => !s))
      throw new Error('a webhook secret is required (an empty secret would accept forged deliveries)');
    this.maxBodyBytes = options.maxBodyBytes ?? defaultMaxBodyBytes;
    this.bodies = new ByteBudget(options.maxBodyBytesInFlight ?? defaultMaxBodyBytesInFlight);
    this.bodyDeadlineMs = options.bodyDeadlineMs ?? defaultBodyDeadlineMs;
    this.dedupe = options.dedupe ?? new DeliveryDedupe();
    this.logger = options.logger ?? silentLogger;
    this.observe = options.observe ?? (() => {});
    const policy = options.policy;
    this.pullRequests = new PullRequestEventHandler({
      writer: options.writer,
      policy: typeof policy === 'function' ? policy : () => policy,
      approvals: options.approvals,
      cloneUrl: options.cloneUrl,
      onUpsert: options.onUpsert,
      environments: options.environments,
    });
    const { requestRerun, environments } = options;
    this.reruns = requestRerun && new CheckRerunHandler({ requestRerun, environments, logger: this.logger });
  }

  /** Reads the request's body and answers it. */
  async handle(req: IncomingMessage): Promise<WebhookAnswer> {
    const started = performance.now();
    let body: Buffer;
    try {
      body = await readWebhookBody(req, this.maxBodyBytes, this.bodies, this.bodyDeadlineMs);
    } catch (err) {
      return this.finish(unreadBody(err, this.maxBodyBytes), req.headers, started);
    }
    return this.receive({ headers: req.headers, body }, started);
  }

  /** Answers a delivery whose body has been read. */
  receive(request: { headers: IncomingHttpHeaders; body: Buffer }, started = performance.now()): WebhookAnswer {
    const answer = this.answer(request.headers, request.body);
    return this.finish(answer, request.headers, started);
  }

  private answer(headers: IncomingHttpHeaders, body: Buffer): WebhookAnswer {
    if (!signatureMatches(this.secrets, body, header(headers, 'x-hub-signature-256'))) {
      return reply(401, { result: 'unauthorized', reason: 'missing or invalid X-Hub-Signature-256' });
    }
    const type = (header(headers, 'content-type') ?? '').split(';')[0]!.trim().toLowerCase();
    if (type !== 'application/json') {
      return reply(415, {
        result: 'unsupported-media-type',
        reason: "deliveries must be application/json (set the webhook's content type to JSON)",
      });
    }
    const delivery = header(headers, 'x-github-delivery');
    const event = header(headers, 'x-github-event');
    if (!delivery || !event) return reply(400, { result: 'bad-request', reason: 'missing X-GitHub-Delivery or X-GitHub-Event' });
    // Not covered by the signature: a replayed body may carry any id and event, which the dedupe keeps for an hour
    // and the answer and its log repeat.
    if (!deliveryIdPattern.test(delivery)) {
      return reply(400, { result: 'bad-request', reason: 'X-GitHub-Delivery is not a delivery id (GitHub sends a GUID)' });
    }
    if (!eventNamePattern.test(event)) {
      return reply(400, { result: 'bad-request', delivery, reason: 'X-GitHub-Event is not an event name' });
    }
    let payload: unknown;
    try {
      payload = JSON.parse(body.toString('utf8'));
    } catch {
      return reply(400, { result: 'bad-request', delivery, event, reason: 'the body is not valid JSON' });
    }
    if (typeof payload !== 'object' || payload === null || Array.isArray(payload)) {
      return reply(400, { result: 'bad-request', delivery, event, reason: 'the body is not a JSON object' });
    }
    const action = typeof (payload as { action?: unknown }).action === 'string' ? (payload as { action: string }).action : undefined;
    const where = { delivery, event, ...(action ? { action } : {}) };

    if (!this.dedupe.claim(delivery)) return reply(200, { result: 'duplicate', ...where, reason: 'this delivery was received before' });
    if (event === 'ping') return reply(200, { result: 'pong', ...where });
    const reruns = rerunEvents.has(event) ? this.reruns : undefined;
    if ((event !== 'pull_request' && !reruns) || !action) {
      return reply(202, { result: 'unused', ...where, reason: `the operator does not use ${event} events` });
    }

    try {
      // 202 for accepted (written after the answer), ignored and unused alike; 200 for stale (no effect, like a duplicate).
      const outcome = reruns
        ? reruns.handle(event, action, payload as Record<string, unknown>)
        : this.pullRequests.handle(action, payload as Record<string, unknown>);
      return reply(outcome.result === 'stale' ? 200 : 202, { ...where, ...outcome });
    } catch (err) {
      // Nothing was queued: a redelivery (GitHub's "Redeliver") must be able to do it.
      this.dedupe.release(delivery);
      if (err instanceof PayloadError) return reply(400, { result: 'bad-request', ...where, reason: err.message });
      if (err instanceof WriterFullError) {
        this.logger.error(
          { ...where, maxWaiting: err.maxWaiting },
          'delivery refused: too many PreviewEnvironment writes wait for the cluster',
        );
        return reply(
          503,
          { result: 'unavailable', ...where, reason: 'the cluster is unavailable; redeliver later' },
          { 'retry-after': '60' },
        );
      }
      this.logger.error({ ...where, err }, 'could not handle the pull request delivery');
      // The details stay in the log: GitHub shows answers to every repository admin.
      return reply(500, { result: 'failed', ...where, reason: 'the operator could not handle this delivery' });
    }
  }

  private finish(answer: WebhookAnswer, headers: IncomingHttpHeaders, started: number): WebhookAnswer {
    const durationMs = performance.now() - started;
    const { result, delivery, event, action } = answer.body;
    const outcome: WebhookOutcome = {
      status: answer.status,
      result,
      durationMs,
      delivery: (delivery ?? header(headers, 'x-github-delivery'))?.slice(0, headerExcerptLength),
      event: (event ?? header(headers, 'x-github-event'))?.slice(0, headerExcerptLength),
      ...(action ? { action } : {}),
    };
    const level = answer.status >= 500 ? 'error' : answer.status >= 400 ? 'warn' : 'info';
    this.logger[level](
      { ...outcome, environment: answer.body.environment, op: answer.body.op, reason: answer.body.reason },
      'webhook delivery',
    );
    this.observe(outcome);
    return answer;
  }
}

function reply(status: number, body: WebhookAnswer['body'], headers: Record<string, string> = {}): WebhookAnswer {
  return { status, body, headers };
}

/** The events the receiver answers by name; a metric labelled by event counts every other one as `other`. */
const answeredEvents = new Set(['ping', 'pull_request', ...rerunEvents]);

/**
 * A bounded metric label for a request's event. The X-GitHub-Event header is not covered by the
 * signature (a replayed body can carry any), and a refused request names whatever it likes: as a
 * label it would add a series per value, for ever.
 */
export function webhookEventLabel(event: string | undefined): string {
  if (event === undefined) return 'unknown';
  return answeredEvents.has(event) ? event : 'other';
}

/** A delivery id as GitHub sends one (a GUID), with room for other short ids: never kilobytes. */
const deliveryIdPattern = /^[A-Za-z0-9._-]{1,64}$/;

/** An event name as GitHub sends one (`pull_request`, `check_suite`). */
const eventNamePattern = /^[a-z0-9_]{1,64}$/;

/** How much of a header an outcome keeps for the log (Node allows 16 KiB of headers). */
const headerExcerptLength = 100;

function header(headers: IncomingHttpHeaders, name: string): string | undefined {
  const value = headers[name];
  return Array.isArray(value) ? value[0] : value;
}

/** The answer to a body that could not be read. Closing the connection spares reading the rest of a body that will be thrown away. */
function unreadBody(err: unknown, maxBodyBytes: number): WebhookAnswer {
  if (err instanceof BodyTooLargeError) {
    return reply(413, { result: 'too-large', reason: `the body is larger than ${maxBodyBytes} bytes` }, { connection: 'close' });
  }
  if (err instanceof BodyTimeoutError) {
    return reply(408, { result: 'bad-request', reason: `${err.message}; GitHub waits no longer` }, { connection: 'close' });
  }
  if (err instanceof BodyBudgetError) {
    const reason = `${err.message}; redeliver later`;
    return reply(503, { result: 'unavailable', reason }, { connection: 'close', 'retry-after': '10' });
  }
  return reply(400, { result: 'bad-request', reason: (err as Error).message });
}
