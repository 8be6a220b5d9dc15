// core/v1 Events on the object a user looks at (`kubectl describe`). A repeat of the same
// event (same object, type, reason and message) bumps the count of the existing Event
// instead of creating another, as client-go's recorder does.
import { randomBytes } from 'node:crypto';
import os from 'node:os';
import { plainTextWithin } from '../plain-text.js';
import type { ObjectClient } from './object-client.js';
import { formatTime } from './conditions.js';
import { ForbiddenError, NotFoundError, toKubeError } from './errors.js';
import type { KubeObject } from './kube-object.js';
import { stderrLogger, type Logger } from './logger.js';

export type EventType = 'Normal' | 'Warning';

export interface EventRecorderOptions {
  /** `source.component` / `reportingComponent`, e.g. `preview-operator`. */
  component: string;
  /** `source.host` / `reportingInstance` (default the hostname). */
  instance?: string;
  /** Aggregation entries kept (default 4096, least recently used dropped). */
  cacheSize?: number;
  logger?: Logger;
}

interface CoreEvent extends KubeObject {
  count?: number;
}

interface Aggregate {
  namespace: string;
  name: string;
  count: number;
}

const maxMessageLength = 1024;

export class EventRecorder {
  private readonly instance: string;
  private readonly cacheSize: number;
  private readonly logger: Logger;
  private readonly aggregates = new Map<string, Aggregate>();
  /** One write at a time per aggregation key, so concurrent repeats count correctly. */
  private readonly pending = new Map<string, Promise<void>>();

  constructor(
    private readonly client: ObjectClient,
    private readonly options: EventRecorderOptions,
  ) {
    this.instance = options.instance ?? os.hostname();
    this.cacheSize = options.cacheSize ?? 4096;
    this.logger = options.logger ?? stderrLogger;
  }

  /**
   * Records an Event on `involved`. Never throws: an event that cannot be written is
   * logged, since it must not fail the reconcile that reports it.
   */
  record(involved: KubeObject, type: EventType, reason: string, message: string): Promise<void> {
    // Messages quote what users wrote (`kubectl describe` prints them to terminals): no controls.
    const text = plainTextWithin(message, maxMessageLength);
    const key = [
      involved.apiVersion,
      involved.kind,
      involved.metadata.namespace ?? '',
      involved.metadata.name,
      involved.metadata.uid ?? '',
      type,
      reason,
      text,
    ].join('\0');
    const previous = this.pending.get(key) ?? Promise.resolve();
    const next = previous
      .then(() => this.write(key, involved, type, reason, text))
      .catch((err) => {
        const error = toKubeError(err);
        // As client-go's recorder: an Event cannot outlive its namespace, and nobody would read it.
        if (error instanceof ForbiddenError && error.namespaceTerminating) return;
        this.logger.warn({ kind: involved.kind, name: involved.metadata.name, reason, err: error.message }, 'event: could not record');
      });
    this.pending.set(key, next);
    void next.finally(() => {
      if (this.pending.get(key) === next) this.pending.delete(key);
    });
    return next;
  }

  private async write(key: string, involved: KubeObject, type: EventType, reason: string, message: string): Promise<void> {
    const now = formatTime(new Date());
    const existing = this.aggregates.get(key);
    if (existing) {
      try {
        const updated = await this.client.patch<CoreEvent>(
          { apiVersion: 'v1', kind: 'Event', namespace: existing.namespace, name: existing.name },
          'merge',
          { count: existing.count + 1, lastTimestamp: now },
        );
        this.remember(key, { ...existing, count: updated.count ?? existing.count + 1 });
        return;
      } catch (err) {
        // Expired (events live an hour by default): start a new one.
        if (!(err instanceof NotFoundError)) throw err;
        this.aggregates.delete(key);
      }
    }
    // Events about cluster-scoped objects go to `default`, as client-go does.
    const namespace = involved.metadata.namespace || 'default';
    const name = `${involved.metadata.name}.${Date.now().toString(16)}${randomBytes(4).toString('hex')}`;
    const event = {
      apiVersion: 'v1',
      kind: 'Event',
      metadata: { name, namespace },
      involvedObject: {
        apiVersion: involved.apiVersion,
        kind: involved.kind,
        name: involved.metadata.name,
        namespace: involved.metadata.namespace,
        uid: involved.metadata.uid,
        resourceVersion: involved.metadata.resourceVersion,
      },
      type,
      reason,
      message,
      count: 1,
      firstTimestamp: now,
      lastTimestamp: now,
      source: { component: this.options.component, host: this.instance },
      reportingComponent: this.options.component,
      reportingInstance: this.instance,
    };
    await this.client.create(event);
    this.remember(key, { namespace, name, count: 1 });
  }

  private remember(key: string, aggregate: Aggregate): void {
    this.aggregates.delete(key);
    this.aggregates.set(key, aggregate);
    if (this.aggregates.size > this.cacheSize) this.aggregates.delete(this.aggregates.keys().next().value!);
  }
}
