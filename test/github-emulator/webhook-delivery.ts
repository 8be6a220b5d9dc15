// Webhook deliveries as GitHub sends them: payloads start from GitHub's published examples
// (@octokit/webhooks-examples) adjusted to the emulator's state, and are signed with the
// hook secret exactly like GitHub (HMAC-SHA256 of the raw body in X-Hub-Signature-256).
import { createHmac, randomUUID } from 'node:crypto';
import { createRequire } from 'node:module';
import type { OpenApiContract } from './openapi-contract.js';

interface WebhookDefinition {
  name: string;
  examples: Array<Record<string, unknown> & { action?: string }>;
}

let definitions: WebhookDefinition[] | undefined;

function allDefinitions(): WebhookDefinition[] {
  definitions ??= createRequire(import.meta.url)('@octokit/webhooks-examples') as WebhookDefinition[];
  return definitions;
}

/**
 * A deep copy of GitHub's published example for an event and action. Examples sent to an
 * App (with `installation`) are preferred, since the operator runs as one. Some actions
 * have no published example (`pull_request.edited`): then another action's example of the
 * same event is the starting point, since an event's payload shape does not depend on it.
 */
export function webhookExample(event: string, action?: string): Record<string, unknown> {
  const def = allDefinitions().find((d) => d.name === event);
  if (!def) throw new Error(`@octokit/webhooks-examples has no "${event}" event`);
  const pick = (list: WebhookDefinition['examples']) => list.find((e) => 'installation' in e) ?? list[0];
  const example = pick(def.examples.filter((e) => action === undefined || e.action === action)) ?? pick(def.examples);
  if (!example) throw new Error(`@octokit/webhooks-examples has no "${event}" example`);
  return structuredClone(example);
}

export interface WebhookHook {
  /** The hook's secret; GitHub signs every delivery with it. */
  secret: string;
  /** X-GitHub-Hook-ID. */
  id: number;
  /** `integration` for an App's webhook (target id = App id), `repository` for a repository hook. */
  targetType: 'integration' | 'repository';
  targetId: number;
}

export interface DeliveryResponse {
  status: number;
  headers: Headers;
  body: string;
}

export interface WebhookDelivery {
  /** X-GitHub-Delivery: a fresh UUID per delivery, as GitHub does (a redelivery keeps it). */
  readonly id: string;
  readonly event: string;
  readonly action: string | undefined;
  readonly payload: Record<string, unknown>;
  /** The exact bytes sent, which the signature covers. */
  readonly body: string;
  readonly headers: Record<string, string>;
  /**
   * POSTs the delivery. `override` sends a tampered copy (other headers — undefined removes
   * one — or another body, signature unchanged) for tests of the receiver's defences.
   */
  deliver(url: string, override?: { headers?: Record<string, string | undefined>; body?: string | Buffer }): Promise<DeliveryResponse>;
}

export function signBody(secret: string, body: string | Buffer): { sha256: string; sha1: string } {
  return {
    sha256: `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`,
    sha1: `sha1=${createHmac('sha1', secret).update(body).digest('hex')}`,
  };
}

/**
 * A signed delivery of `payload`. When a contract is given the payload is first checked
 * against the description's `x-webhooks` schema (`<event>-<action>`); problems are
 * returned so the caller can record them.
 */
export function createDelivery(input: {
  event: string;
  payload: Record<string, unknown>;
  hook: WebhookHook;
  contract?: OpenApiContract;
  onProblems?: (problems: string[]) => void;
}): WebhookDelivery {
  const { event, payload, hook } = input;
  const action = typeof payload.action === 'string' ? payload.action : undefined;
  if (input.contract) {
    const name = [event, action].filter(Boolean).join('-').replace(/_/g, '-');
    const problems = input.contract.checkWebhook(name, payload);
    if (problems.length) input.onProblems?.(problems);
  }
  const body = JSON.stringify(payload);
  const signature = signBody(hook.secret, body);
  const id = randomUUID();
  const headers: Record<string, string> = {
    'content-type': 'application/json',
    'user-agent': 'GitHub-Hookshot/8e1f6c1',
    'x-github-delivery': id,
    'x-github-event': event,
    'x-github-hook-id': String(hook.id),
    'x-github-hook-installation-target-id': String(hook.targetId),
    'x-github-hook-installation-target-type': hook.targetType,
    'x-hub-signature': signature.sha1,
    'x-hub-signature-256': signature.sha256,
  };
  return {
    id,
    event,
    action,
    payload,
    body,
    headers,
    async deliver(url, override = {}) {
      const sent: Record<string, string> = { ...headers };
      for (const [name, value] of Object.entries(override.headers ?? {})) {
        if (value === undefined) delete sent[name.toLowerCase()];
        else sent[name.toLowerCase()] = value;
      }
      const response = await fetch(url, { method: 'POST', headers: sent, body: override.body ?? body });
      return { status: response.status, headers: response.headers, body: await response.text() };
    },
  };
}
