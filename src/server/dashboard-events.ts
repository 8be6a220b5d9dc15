// The recent Events of one environment, for its dashboard page: those on the PreviewEnvironment
// itself (in `default`, where the recorder puts Events of cluster-scoped objects) and those in
// its namespace (its Algorithms, Databases, pods). Read only while someone looks, one page per
// namespace (a noisy namespace costs one bounded request, never a walk through every page), and
// kept a few seconds so that every open page and every refresh share one read.
import type { KubeClient } from '../kube/client.js';
import { toKubeError } from '../kube/errors.js';

export interface EventView {
  type: string;
  reason: string;
  message: string;
  /** `Kind/name` of the object the Event is about. */
  object: string;
  count: number;
  /** RFC 3339. */
  lastSeen?: string;
}

export interface RecentEvents {
  events: EventView[];
  /** Why the Events could not be read (e.g. the operator may not list them). */
  error?: string;
}

export interface EnvironmentEventsOptions {
  /** Events shown per environment (default 25). */
  limit?: number;
  /** Events read per namespace, at most (default 250). */
  pageSize?: number;
  /** How long a read is reused (default 4 s). */
  maxAgeMs?: number;
  /** Environments whose reads are kept (default 64). */
  cacheSize?: number;
  now?: () => number;
}

interface CoreEvent {
  metadata?: { creationTimestamp?: string };
  involvedObject?: { kind?: string; name?: string };
  type?: string;
  reason?: string;
  message?: string;
  count?: number;
  lastTimestamp?: string;
  eventTime?: string;
  firstTimestamp?: string;
}

export class EnvironmentEvents {
  private readonly cache = new Map<string, { at: number; read: Promise<RecentEvents> }>();

  constructor(
    private readonly client: Pick<KubeClient, 'request'>,
    private readonly options: EnvironmentEventsOptions = {},
  ) {}

  /** The newest Events of environment `name` (and of its namespace, when it has one), newest first. */
  recent(name: string, namespace: string | undefined): Promise<RecentEvents> {
    const now = (this.options.now ?? Date.now)();
    const key = `${name}\0${namespace ?? ''}`;
    const cached = this.cache.get(key);
    if (cached && now - cached.at < (this.options.maxAgeMs ?? 4000)) return cached.read;
    const read = this.read(name, namespace);
    this.cache.delete(key);
    this.cache.set(key, { at: now, read });
    if (this.cache.size > (this.options.cacheSize ?? 64)) this.cache.delete(this.cache.keys().next().value!);
    return read;
  }

  private async read(name: string, namespace: string | undefined): Promise<RecentEvents> {
    try {
      // Promise.all handles both reads at once: a failing second one is never left unobserved.
      const [own, inNamespace] = await Promise.all([
        this.list('default', `involvedObject.kind=PreviewEnvironment,involvedObject.name=${name}`),
        namespace ? this.list(namespace) : [],
      ]);
      const events = [...own, ...inNamespace].map(eventView);
      events.sort((a, b) => (b.lastSeen ?? '').localeCompare(a.lastSeen ?? ''));
      return { events: events.slice(0, this.options.limit ?? 25) };
    } catch (err) {
      return { events: [], error: toKubeError(err).message };
    }
  }

  private async list(namespace: string, fieldSelector?: string): Promise<CoreEvent[]> {
    const page = await this.client.request<{ items?: CoreEvent[] }>({
      path: `/api/v1/namespaces/${encodeURIComponent(namespace)}/events`,
      query: { fieldSelector, limit: this.options.pageSize ?? 250 },
    });
    return page?.items ?? [];
  }
}

export function eventView(event: CoreEvent): EventView {
  const lastSeen = event.lastTimestamp ?? event.eventTime ?? event.firstTimestamp ?? event.metadata?.creationTimestamp;
  return {
    type: event.type ?? 'Normal',
    reason: event.reason ?? '',
    message: event.message ?? '',
    object: `${event.involvedObject?.kind ?? ''}/${event.involvedObject?.name ?? ''}`,
    count: typeof event.count === 'number' ? event.count : 1,
    ...(lastSeen ? { lastSeen } : {}),
  };
}
