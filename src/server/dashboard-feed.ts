// The dashboard's live feed: the informer's changes, as rendered rows and pages, to every open
// stream. Each change gets a sequence number; a page records the number it was rendered at and
// its stream starts from there (and a reconnecting browser resumes from its Last-Event-ID), so
// a change made while a page loads or while a stream reconnects is sent, never lost.
import { randomBytes } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { openEventStream, type EventStreamClient } from './dashboard-stream.js';
import type { DashboardObject, EnvironmentView } from './dashboard-view.js';

/** The environments, as the informer caches them. */
export interface DashboardSource {
  list(): DashboardObject[];
  get(name: string): DashboardObject | undefined;
  addHandler(handler: {
    onAdd?(obj: DashboardObject): void;
    onUpdate?(oldObj: DashboardObject, newObj: DashboardObject): void;
    onDelete?(obj: DashboardObject): void;
  }): () => void;
}

export interface FeedRenderer {
  view(obj: DashboardObject): EnvironmentView;
  row(view: EnvironmentView): string;
  /** An environment's page body; `key` changes when what it shows changes. */
  detail(name: string): Promise<{ key: string; html: string }>;
}

export interface ListFilter {
  repository?: string;
  phase?: string;
}

export function matches(view: EnvironmentView, filter: ListFilter): boolean {
  return (!filter.repository || view.repository === filter.repository) && (!filter.phase || view.phase === filter.phase);
}

export interface FeedOptions {
  /** How often open environment pages are refreshed (their Events have no informer), default 5 s. */
  refreshMs?: number;
  /** Deletions remembered for resuming streams (default 1000; older positions reload the page). */
  removalsKept?: number;
}

interface DetailStream {
  name: string;
  key?: string;
  busy?: boolean;
  /** A change arrived while the page was being rendered: render it again. */
  again?: boolean;
}

export class DashboardFeed {
  /** Positions of another process (or of a restart) mean nothing here. */
  private readonly epoch = randomBytes(4).toString('hex');
  private seq = 0;
  private readonly changedAt = new Map<string, number>();
  private readonly removedAt = new Map<string, number>();
  private forgottenBefore = 0;
  private readonly lists = new Map<EventStreamClient, ListFilter>();
  private readonly details = new Map<EventStreamClient, DetailStream>();
  private readonly unsubscribe: () => void;
  private readonly timer: ReturnType<typeof setInterval>;

  constructor(
    private readonly source: DashboardSource,
    private readonly render: FeedRenderer,
    private readonly options: FeedOptions = {},
  ) {
    this.unsubscribe = source.addHandler({
      onAdd: (obj) => this.changed(obj, false),
      onUpdate: (old, obj) => {
        if (old.metadata.resourceVersion !== obj.metadata.resourceVersion) this.changed(obj, false);
      },
      onDelete: (obj) => this.changed(obj, true),
    });
    this.timer = setInterval(() => this.refreshDetails(), options.refreshMs ?? 5000);
    this.timer.unref();
  }

  /** Where the feed is now: a page rendered from the cache at this moment streams from here. */
  get position(): string {
    return `${this.epoch}:${this.seq}`;
  }

  get streams(): number {
    return this.lists.size + this.details.size;
  }

  /** A stream of table rows matching `filter`, from `since` (a position) when given. */
  openList(req: IncomingMessage, res: ServerResponse, filter: ListFilter, since: string | undefined): void {
    const client = openEventStream(req, res, { onClose: () => this.lists.delete(client) });
    this.lists.set(client, filter);
    if (since === undefined) return;
    const from = this.parsePosition(since);
    if (from === undefined) client.send('reload', {});
    else this.replay(client, filter, from);
  }

  /** A stream of one environment's page. */
  openDetail(req: IncomingMessage, res: ServerResponse, name: string): void {
    const state: DetailStream = { name };
    const client = openEventStream(req, res, { onClose: () => this.details.delete(client) });
    this.details.set(client, state);
    void this.refreshDetail(client, state);
  }

  close(): void {
    this.unsubscribe();
    clearInterval(this.timer);
    for (const client of [...this.lists.keys(), ...this.details.keys()]) client.close();
  }

  private changed(obj: DashboardObject, deleted: boolean): void {
    const name = obj.metadata.name;
    if (!name) return;
    const seq = ++this.seq;
    if (deleted) {
      this.changedAt.delete(name);
      this.removedAt.set(name, seq);
      this.forget();
    } else {
      this.removedAt.delete(name);
      this.changedAt.set(name, seq);
    }
    if (this.lists.size > 0) {
      const view = deleted ? undefined : this.render.view(obj);
      let html: string | undefined;
      for (const [client, filter] of this.lists) {
        if (view && matches(view, filter)) client.send('upsert', { name, html: (html ??= this.render.row(view)) }, this.position);
        else client.send('remove', { name }, this.position);
      }
    }
    for (const [client, state] of this.details) if (state.name === name) void this.refreshDetail(client, state);
  }

  /** What changed after `from`, in the order it changed. */
  private replay(client: EventStreamClient, filter: ListFilter, from: number): void {
    const changes: { at: number; name: string; obj?: DashboardObject }[] = [];
    for (const obj of this.source.list()) {
      const at = obj.metadata.name ? (this.changedAt.get(obj.metadata.name) ?? 0) : 0;
      if (at > from) changes.push({ at, name: obj.metadata.name!, obj });
    }
    for (const [name, at] of this.removedAt) if (at > from) changes.push({ at, name });
    for (const { name, obj } of changes.sort((a, b) => a.at - b.at)) {
      const view = obj && this.render.view(obj);
      if (view && matches(view, filter)) client.send('upsert', { name, html: this.render.row(view) }, this.position);
      else client.send('remove', { name }, this.position);
    }
  }

  /** The sequence number of a position of this feed, or undefined when it cannot be resumed from. */
  private parsePosition(position: string): number | undefined {
    const [epoch, seq] = position.split(':');
    const n = Number(seq);
    if (epoch !== this.epoch || !Number.isSafeInteger(n) || n > this.seq || n < this.forgottenBefore) return undefined;
    return n;
  }

  private forget(): void {
    const kept = this.options.removalsKept ?? 1000;
    for (const [name, at] of this.removedAt) {
      if (this.removedAt.size <= kept) break;
      this.removedAt.delete(name);
      this.forgottenBefore = at;
    }
  }

  private refreshDetails(): void {
    for (const [client, state] of this.details) void this.refreshDetail(client, state);
  }

  private async refreshDetail(client: EventStreamClient, state: DetailStream): Promise<void> {
    if (state.busy) {
      state.again = true;
      return;
    }
    state.busy = true;
    try {
      do {
        state.again = false;
        const { key, html } = await this.render.detail(state.name);
        if (key !== state.key && !client.closed) client.send('detail', { html });
        state.key = key;
      } while (state.again);
    } catch {
      // The page keeps what it shows; the next refresh tries again.
    } finally {
      state.busy = false;
    }
  }
}
