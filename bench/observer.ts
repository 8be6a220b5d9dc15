// What the operator does, seen from outside: the bench sends each delivery and watches
// PreviewEnvironments (written, Ready), Algorithms (applied: the environment's custom resource
// exists; custom resources are applied last), with TLS Certificates (certified: cert-manager says
// Ready), Namespaces (gone), and reads the emulator's state (the comment says ready, with TLS at an
// https:// URL). First-seen times per environment, performance.now() ms.
import { Agent, request } from 'node:http';
import { Informer } from '../src/kube/informer.js';
import type { KubeObject } from '../src/kube/kube-object.js';
import { silentLogger } from '../src/kube/logger.js';
import type { PullRequestDriver } from '../test/github-emulator/pull-requests.js';
import type { WebhookDelivery } from '../test/github-emulator/webhook-delivery.js';
import type { BenchEnvironment } from './bench-environment.js';
import type { OperatorProcess } from './operator-process.js';

type Stage = 'written' | 'applied' | 'certified' | 'ready' | 'namespaceGone';

export interface Timeline extends Partial<Record<Stage | 'sent' | 'answered' | 'commented', number>> {
  repo: PullRequestDriver;
  number: number;
  environment?: string;
}

export class Observer {
  private readonly tracked = new Map<string, Timeline>();
  /** Stages seen before the webhook's answer named the environment. */
  private readonly early = new Map<string, Partial<Record<Stage, number>>>();
  private readonly informers: Informer<KubeObject>[] = [];

  constructor(
    private readonly env: BenchEnvironment,
    private readonly operator: OperatorProcess,
    private readonly tls = false,
  ) {}

  async start(): Promise<void> {
    const watch = (apiVersion: string, kind: string) => {
      const informer = new Informer<KubeObject>(this.env.admin, { apiVersion, kind }, { logger: silentLogger });
      this.informers.push(informer);
      return informer;
    };
    const seen = (obj: KubeObject) => {
      this.note(obj.metadata.name!, 'written');
      if ((obj.status as { phase?: string } | undefined)?.phase === 'Ready') this.note(obj.metadata.name!, 'ready');
    };
    const issued = (obj: KubeObject) => {
      const { conditions = [] } = (obj.status ?? {}) as { conditions?: Array<{ type: string; status: string }> };
      if (conditions.some((c) => c.type === 'Ready' && c.status === 'True')) this.note(obj.metadata.namespace!, 'certified');
    };
    if (this.tls) watch('cert-manager.io/v1', 'Certificate').addHandler({ onAdd: issued, onUpdate: (_o, n) => issued(n) });
    watch('preview.alien6.io/v1alpha1', 'PreviewEnvironment').addHandler({ onAdd: seen, onUpdate: (_o, n) => seen(n) });
    watch('ai.alien6.io/v1', 'Algorithm').addHandler({ onAdd: (obj) => this.note(obj.metadata.namespace!, 'applied') });
    watch('v1', 'Namespace').addHandler({ onDelete: (obj) => this.note(obj.metadata.name!, 'namespaceGone') });
    for (const i of this.informers) i.start();
    await Promise.all(this.informers.map((i) => i.waitForSync()));
  }

  private note(name: string, stage: Stage): void {
    const at = this.tracked.get(name) ?? this.early.get(name) ?? {};
    at[stage] ??= performance.now();
    if (!this.tracked.has(name)) this.early.set(name, at);
  }

  /** Sends a delivery (`sent`, `answered`); its answer names the environment, tracked from then on. */
  async send(t: Timeline, delivery: WebhookDelivery): Promise<void> {
    t.sent = performance.now();
    const answer = await post(this.operator.webhookUrl, delivery);
    t.answered = performance.now();
    if (answer.status >= 300) throw new Error(`${t.repo.repository.name}#${t.number}: answered ${answer.status} ${answer.body}`);
    if (t.environment !== undefined) return;
    t.environment = (JSON.parse(answer.body) as { environment?: string }).environment;
    if (!t.environment) throw new Error(`the answer names no environment: ${answer.body}`);
    Object.assign(t, this.early.get(t.environment));
    this.early.delete(t.environment);
    this.tracked.set(t.environment, t);
  }

  /** Waits for `done` (polling the emulator's comments for "✅ Ready"); false when `timeoutMs` passed first. */
  async waitFor(what: string, timeoutMs: number, done: () => boolean): Promise<boolean> {
    const deadline = Date.now() + timeoutMs;
    while (!done()) {
      const exited = this.operator.exited();
      if (exited) throw new Error(`while waiting for ${what}, the operator ${exited}`);
      if (Date.now() > deadline) return false;
      for (const t of this.tracked.values()) {
        if (t.commented !== undefined) continue;
        const ready = (body: string) => body.includes('✅ Ready') && (!this.tls || body.includes('**URL:** https://'));
        if (this.env.gh.comments(t.repo.repository, t.number).some((c) => ready(c.body))) t.commented = performance.now();
      }
      await new Promise((r) => setTimeout(r, 50));
    }
    return true;
  }

  /** Environments Ready and not torn down. */
  standing = () => [...this.tracked.values()].filter((t) => t.ready !== undefined && t.namespaceGone === undefined).length;

  async stop(): Promise<void> {
    await Promise.all(this.informers.map((i) => i.stop()));
  }
}

// Idle sockets close after 4 s, before the server's 5 s: reusing one it closed that moment resets (ECONNRESET).
const agent = new Agent({ keepAlive: true, maxSockets: 64, timeout: 4_000 });
/** Sends a delivery as GitHub does, on a kept-alive connection (node:http costs the bench least CPU per request). */
export function post(url: string, delivery: WebhookDelivery): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const headers = { ...delivery.headers, 'content-length': String(Buffer.byteLength(delivery.body)) };
    const req = request(url, { method: 'POST', agent, headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (d: Buffer) => chunks.push(d));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString() }));
    });
    req.on('error', reject).end(delivery.body);
  });
}

/** `to − from` of each timeline that has both. */
export const span = (list: readonly Timeline[], from: keyof Timeline, to: keyof Timeline): number[] =>
  list.flatMap((t) => (typeof t[from] === 'number' && typeof t[to] === 'number' ? [(t[to] as number) - (t[from] as number)] : []));
