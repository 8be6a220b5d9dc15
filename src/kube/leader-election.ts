// Leader election on a coordination.k8s.io/v1 Lease, as client-go does it: a candidate
// takes the lease when its holder has not renewed it for a lease duration *as observed by
// the candidate's own clock* (no cross-node clock comparison); the leader renews every retry
// period and gives up when it could not renew within the renew deadline; a graceful stop
// releases the lease so another replica takes over at its next retry.
import { randomUUID } from 'node:crypto';
import os from 'node:os';
import type { KubeClient } from './client.js';
import { ConflictError, NotFoundError, toKubeError } from './errors.js';
import type { KubeObject } from './kube-object.js';
import { stderrLogger, type Logger } from './logger.js';

export interface LeaderElectionOptions {
  /** Where the Lease lives. */
  namespace: string;
  /** The Lease's name. */
  name: string;
  /** This replica's identity (default `<hostname>_<uuid>`). */
  identity?: string;
  /** How long a lease is valid without renewal (default 15 s). */
  leaseDurationMs?: number;
  /** How long the leader keeps trying to renew before it gives up (default 10 s). */
  renewDeadlineMs?: number;
  /** How often candidates try to acquire and the leader renews (default 2 s). */
  retryPeriodMs?: number;
  onStartedLeading?: () => void;
  /** Called once when leadership ends (lost, or released by `stop`). */
  onStoppedLeading?: () => void;
  /** Called when the observed holder changes (including to ourselves). */
  onNewLeader?: (identity: string) => void;
  logger?: Logger;
}

interface LeaseSpec {
  holderIdentity?: string | null;
  leaseDurationSeconds?: number;
  acquireTime?: string | null;
  renewTime?: string | null;
  leaseTransitions?: number;
}

interface Lease extends KubeObject {
  spec?: LeaseSpec;
}

/**
 * A MicroTime as the API server requires it: RFC 3339 with exactly six fractional digits
 * (client-node sends three, which the server rejects).
 */
export function formatMicroTime(date: Date): string {
  return date.toISOString().replace(/\.(\d{3})Z$/, '.$1000Z');
}

export class LeaderElector {
  readonly identity: string;
  private readonly leaseDurationMs: number;
  private readonly renewDeadlineMs: number;
  private readonly retryPeriodMs: number;
  private readonly logger: Logger;
  private observed: { spec: LeaseSpec; resourceVersion: string; at: number } | undefined;
  private leading = false;
  private running = false;
  private lastRenew = 0;
  private timer: ReturnType<typeof setTimeout> | undefined;
  private inFlight: Promise<void> | undefined;
  private lastLeader: string | undefined;

  constructor(
    private readonly client: KubeClient,
    private readonly options: LeaderElectionOptions,
  ) {
    this.identity = options.identity ?? `${os.hostname()}_${randomUUID()}`;
    this.leaseDurationMs = options.leaseDurationMs ?? 15_000;
    this.renewDeadlineMs = options.renewDeadlineMs ?? 10_000;
    this.retryPeriodMs = options.retryPeriodMs ?? 2_000;
    if (this.leaseDurationMs <= this.renewDeadlineMs) throw new Error('leaseDuration must be greater than renewDeadline');
    if (this.renewDeadlineMs <= this.retryPeriodMs) throw new Error('renewDeadline must be greater than retryPeriod');
    this.logger = options.logger ?? stderrLogger;
  }

  /** Starts campaigning (and, once leading, renewing) in the background. */
  start(): void {
    if (this.running) return;
    this.running = true;
    this.tick();
  }

  isLeader(): boolean {
    return this.leading;
  }

  /** The holder last seen on the Lease. */
  leader(): string | undefined {
    return this.observed?.spec.holderIdentity ?? undefined;
  }

  /** Stops campaigning; if leading, releases the lease (so another replica takes over at once) and calls `onStoppedLeading`. */
  async stop(): Promise<void> {
    if (!this.running) return;
    this.running = false;
    clearTimeout(this.timer);
    await this.inFlight;
    if (!this.leading) return;
    await this.release();
    this.setLeading(false);
  }

  private tick(): void {
    if (!this.running) return;
    this.inFlight = this.step().finally(() => {
      this.inFlight = undefined;
      if (this.running) this.timer = setTimeout(() => this.tick(), this.nextDelay());
    });
  }

  /** The retry period, or less when the holder's lease (as we observed it) expires sooner. */
  private nextDelay(): number {
    const o = this.observed;
    if (this.leading || !o?.spec.holderIdentity || o.spec.holderIdentity === this.identity) return this.retryPeriodMs;
    const expiresIn = o.at + (o.spec.leaseDurationSeconds ?? 0) * 1000 - Date.now();
    // Already expired (and not taken, or we would lead): the normal period, never a busy loop.
    return expiresIn > 0 ? Math.min(this.retryPeriodMs, expiresIn + 10) : this.retryPeriodMs;
  }

  private async step(): Promise<void> {
    let ok = false;
    try {
      ok = await this.tryAcquireOrRenew();
    } catch (err) {
      this.logger.warn({ lease: this.options.name, err: toKubeError(err).message }, 'leader election: lease request failed');
    }
    if (!this.running) return;
    const now = Date.now();
    if (ok) {
      this.lastRenew = now;
      if (!this.leading) {
        this.logger.info({ lease: this.options.name, identity: this.identity }, 'leader election: became leader');
        this.setLeading(true);
      }
      return;
    }
    if (!this.leading) return;
    const heldByOther = !!this.leader() && this.leader() !== this.identity;
    if (heldByOther || now - this.lastRenew >= this.renewDeadlineMs) {
      this.logger.error({ lease: this.options.name, identity: this.identity, holder: this.leader() }, 'leader election: lost the lease');
      this.running = false;
      this.setLeading(false);
    }
  }

  private setLeading(leading: boolean): void {
    if (this.leading === leading) return;
    this.leading = leading;
    try {
      if (leading) this.options.onStartedLeading?.();
      else this.options.onStoppedLeading?.();
    } catch (err) {
      this.logger.error({ lease: this.options.name, err }, 'leader election: callback threw');
    }
  }

  private observe(lease: Lease, now: number): void {
    const spec = lease.spec ?? {};
    const prev = this.observed;
    const changed = !prev || prev.resourceVersion !== lease.metadata.resourceVersion;
    this.observed = { spec, resourceVersion: lease.metadata.resourceVersion ?? '', at: changed ? now : prev!.at };
    const holder = spec.holderIdentity ?? '';
    if (holder && holder !== this.lastLeader) {
      this.lastLeader = holder;
      this.options.onNewLeader?.(holder);
    }
  }

  private leaseRef() {
    return { apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', namespace: this.options.namespace, name: this.options.name };
  }

  private async tryAcquireOrRenew(): Promise<boolean> {
    const signal = AbortSignal.timeout(this.renewDeadlineMs);
    const now = new Date();
    const path = await this.client.pathOf(this.leaseRef());
    let lease: Lease;
    try {
      lease = await this.client.request<Lease>({ path, signal });
    } catch (err) {
      if (!(err instanceof NotFoundError)) throw err;
      const spec = this.ourSpec(now, undefined);
      try {
        const created = await this.client.request<Lease>({
          method: 'POST',
          path: await this.client.pathOf({ ...this.leaseRef(), name: undefined }),
          signal,
          body: {
            apiVersion: 'coordination.k8s.io/v1',
            kind: 'Lease',
            metadata: { name: this.options.name, namespace: this.options.namespace },
            spec,
          },
        });
        this.observe(created, now.getTime());
        return true;
      } catch (createErr) {
        if (createErr instanceof ConflictError) return false;
        throw createErr;
      }
    }
    this.observe(lease, now.getTime());
    const spec = lease.spec ?? {};
    const holder = spec.holderIdentity ?? '';
    const durationMs = (spec.leaseDurationSeconds ?? 0) * 1000;
    if (holder && holder !== this.identity && this.observed!.at + durationMs > now.getTime()) return false;
    try {
      const updated = await this.client.request<Lease>({
        method: 'PUT',
        path,
        signal,
        body: { ...lease, spec: this.ourSpec(now, spec) },
      });
      this.observe(updated, now.getTime());
      return true;
    } catch (err) {
      if (err instanceof ConflictError) return false;
      throw err;
    }
  }

  private ourSpec(now: Date, previous: LeaseSpec | undefined): LeaseSpec {
    const renewing = previous?.holderIdentity === this.identity;
    return {
      holderIdentity: this.identity,
      leaseDurationSeconds: Math.ceil(this.leaseDurationMs / 1000),
      acquireTime: renewing && previous?.acquireTime ? previous.acquireTime : formatMicroTime(now),
      renewTime: formatMicroTime(now),
      leaseTransitions: (previous?.leaseTransitions ?? 0) + (previous && !renewing ? 1 : 0),
    };
  }

  /** Gives the lease up: no holder, so the next candidate to look takes it. */
  private async release(): Promise<void> {
    try {
      const path = await this.client.pathOf(this.leaseRef());
      const lease = await this.client.request<Lease>({ path, signal: AbortSignal.timeout(this.renewDeadlineMs) });
      if (lease.spec?.holderIdentity !== this.identity) return;
      const now = formatMicroTime(new Date());
      await this.client.request({
        method: 'PUT',
        path,
        signal: AbortSignal.timeout(this.renewDeadlineMs),
        body: { ...lease, spec: { ...lease.spec, holderIdentity: null, leaseDurationSeconds: 1, acquireTime: now, renewTime: now } },
      });
      this.logger.info({ lease: this.options.name, identity: this.identity }, 'leader election: released the lease');
    } catch (err) {
      this.logger.warn({ lease: this.options.name, err: toKubeError(err).message }, 'leader election: could not release the lease');
    }
  }
}
