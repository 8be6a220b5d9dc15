// Scenario 1, webhook intake: N signed `pull_request.opened` deliveries (one per pull request,
// so each is a real PreviewEnvironment write), C at a time, against the receiver in its own
// process. Deliveries are built and signed before the clock starts, and a warm-up of other
// deliveries is sent and written first: the warm server is measured, not the signer or V8's
// first compilations. Answer time is taken at the client (request written → last byte read, by
// a raw-socket client as lean as wrk, bench/raw-posts.ts) and, separately, inside the receiver
// (body read → answer decided). The receiver answers 202 once a delivery is queued and its
// EnvironmentWriter writes after, so when the writes landed is measured too: per delivery,
// submit → written (the writer's own timing), and for the whole batch, first delivery sent →
// every write done.
import { randomBytes } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { PullRequestDriver } from '../test/github-emulator/pull-requests.js';
import type { WebhookDelivery } from '../test/github-emulator/webhook-delivery.js';
import type { BenchEnvironment } from './bench-environment.js';
import { startBenchChild } from './child-process.js';
import { RawConnections, serializePost } from './raw-posts.js';
import { slowestAnswerGroups } from './answer-stalls.js';
import { GcPauseRecorder, summarizeGcPauses, type GcPause } from './gc-pauses.js';
import { scheduleBetween, threadSchedule, type ThreadSchedule } from './process-usage.js';
import type { ScenarioResult } from './figures.js';
import { ratio, summarize } from './stats.js';
import { benchSpec } from './bench-preview.js';
import { environmentObject } from '../src/intake/environment-store.js';
import { KubeClient } from '../src/kube/client.js';

export interface IntakeOptions {
  deliveries: number;
  concurrency: number;
  /** Deliveries (for other PRs) sent and written before the clock starts, so V8 has compiled the hot paths. */
  warmup: number;
  /**
   * After the flood, deliveries sent at these steady rates (per second), each for `seconds`, as
   * GitHub sends them (open loop): the answer time at a rate, not at saturation.
   */
  openLoop: { perSecond: number[]; seconds: number };
}

interface OpenLoopResult {
  perSecond: number;
  answers: number[];
  /** How long after it was due each was written: the client's own lateness, or waiting for a connection. */
  late: number[];
  failed: number;
  receiver: number[];
  written: number[];
  cpuMsPerDelivery: number;
}

const environmentsPath = '/apis/preview.alien6.io/v1alpha1/previewenvironments';
/** Before each open-loop rate: the API server and etcd finish what the writes before left them (compaction, watches). */
const settleMs = 2000;

interface IntakeReport {
  durationsMs: number[];
  results: Record<string, number>;
  cpuMs: number;
  /** The receiver's GC pauses since its last report. */
  gcPauses: GcPause[];
  writes: { durationsMs: number[]; results: Record<string, number>; failed: number; retries: number; pending: number };
}

const isReport = (v: { durationsMs?: unknown }) => Array.isArray(v.durationsMs);
const isIdle = (v: { idle?: unknown }) => v.idle === true;

/** Deletes every PreviewEnvironment with this label (the bench's own, left without finalizers). */
export async function deleteEnvironments(env: BenchEnvironment, labelSelector: string): Promise<void> {
  await env.admin.request({ method: 'DELETE', path: environmentsPath, query: { labelSelector } });
}

/** `count` server-side applies of distinct PreviewEnvironments, `concurrency` at a time; ms each. */
async function rawApplies(env: BenchEnvironment, owner: string, count: number, concurrency: number): Promise<number[]> {
  const client = new KubeClient(env.cluster.kubeConfig, { fieldManager: 'preview-bench', userAgent: 'preview-bench' });
  const objects = Array.from({ length: count }, (_, i) => {
    const n = i + 1;
    const spec = benchSpec(owner, 'bare', n, n.toString(16).padStart(40, 'd'), `https://github.com/${owner}/bare.git`);
    const obj = environmentObject(`pr-${n}-bare-${owner}`, spec);
    obj.metadata.labels = { ...obj.metadata.labels, 'preview.alien6.io/bench': owner };
    return obj;
  });
  try {
    await client.apply(objects[0]!); // discovery and the connection, outside the measurement
    const out: number[] = new Array(count);
    let next = 0;
    await Promise.all(Array.from({ length: concurrency }, async () => {
      for (let i = next++; i < count; i = next++) {
        const t = performance.now();
        await client.apply({ ...objects[i]!, metadata: { ...objects[i]!.metadata, name: `${objects[i]!.metadata.name}-m` } });
        out[i] = performance.now() - t;
      }
    }));
    return out;
  } finally {
    await deleteEnvironments(env, `preview.alien6.io/bench=${owner}`).catch(() => {});
    client.close();
  }
}

export async function webhookIntake(env: BenchEnvironment, options: IntakeOptions): Promise<Omit<ScenarioResult, 'durationMs'>> {
  const { gh, cluster } = env;
  const secret = randomBytes(20).toString('hex');
  const owner = `intake-${randomBytes(3).toString('hex')}`;
  const driver = await PullRequestDriver.create(gh, { owner, name: 'service', webhookSecret: secret });
  const repo = gh.repository(driver.repository);
  const baseSha = repo.branches.get(repo.defaultBranch)!;
  const buildStarted = performance.now();
  const openLoopCounts = options.openLoop.perSecond.map((perSecond) => Math.round(perSecond * options.openLoop.seconds));
  const all: WebhookDelivery[] = [];
  for (let n = 1; n <= options.warmup + options.deliveries + openLoopCounts.reduce((a, b) => a + b, 0); n++) {
    gh.openPullRequest(driver.repository, {
      number: n, author: 'alice', authorAssociation: 'MEMBER',
      head: { ref: `feature-${n}`, sha: n.toString(16).padStart(40, 'c') }, base: { sha: baseSha },
    });
    all.push(driver.delivery('opened', n, 'alice'));
  }
  const warmup = all.slice(0, options.warmup);
  const deliveries = all.slice(options.warmup, options.warmup + options.deliveries);
  // The open loop's deliveries: distinct PRs too, after the flood's.
  let taken = options.warmup + options.deliveries;
  const openLoops = options.openLoop.perSecond.map((perSecond, i) => ({ perSecond, deliveries: all.slice(taken, (taken += openLoopCounts[i]!)) }));
  const buildMs = performance.now() - buildStarted;

  const server = startBenchChild('webhook-intake-server', [], {
    BENCH_INTAKE: JSON.stringify({ kubeconfigPath: cluster.kubeconfigPath, secret, githubUrl: gh.url, githubToken: gh.createToken('intake-operator') }),
  });
  try {
    const { url } = await server.nextJson<{ url: string }>();
    const target = new URL(url);
    const port = Number(target.port);
    const serialize = (d: WebhookDelivery) => serializePost(target.host, { path: target.pathname, headers: d.headers, body: d.body });
    // Warm-up outside the measurement: the first request pays for discovery and TLS to the API
    // server, the first hundreds for V8's compiling the hot paths (a running operator has done both).
    const warming = await RawConnections.open(port, options.concurrency);
    try {
      await warming.sendAll([serialize(warmup[0] ?? driver.delivery('opened', all.length + 1, 'alice'))]);
      await warming.sendAll(warmup.slice(1).map(serialize));
    } finally {
      warming.close();
    }
    server.send('idle');
    await server.nextJson(120_000, isIdle);
    server.send('report');
    await server.nextJson(120_000, isReport);

    // Connected after the warm-up's writes are done (the receiver closes connections idle for 5 s)
    // and before the clock starts.
    const connections = await RawConnections.open(port, options.concurrency);
    const auditMark = cluster.audit.mark();
    const requests = deliveries.map(serialize);
    // The receiver's main thread (answers and writes share it): how long it ran and how long it
    // was runnable but waited for a CPU while the answers went out.
    const receiverPid = server.child.pid!;
    const scheduleBefore = threadSchedule(receiverPid);
    // Whose collector stopped a thread while the answers went out: the receiver's, or the client's own.
    const clientGc = new GcPauseRecorder();
    const started = performance.now();
    const answers = await connections.sendAll(requests).finally(() => connections.close()).catch(async (err: unknown) => {
      await clientGc.stop();
      throw err;
    });
    const wallMs = performance.now() - started;
    const scheduleAfter = threadSchedule(receiverPid);
    const answering = [performance.timeOrigin + started, performance.timeOrigin + started + wallMs] as const;
    const clientPauses = summarizeGcPauses(await clientGc.stop(), ...answering);
    const schedule: ThreadSchedule | undefined = scheduleBefore && scheduleAfter ? scheduleBetween(scheduleBefore, scheduleAfter) : undefined;
    server.send('idle');
    await server.nextJson(600_000, isIdle);
    const recordedMs = performance.now() - started;
    server.send('report');
    const inside = await server.nextJson<IntakeReport>(120_000, isReport);
    await cluster.audit.settle();
    const writes = cluster.audit.writes(auditMark, { resource: 'previewenvironments' }).length;

    // Side by side: the same number of PreviewEnvironment applies, same concurrency, straight
    // from a minimal client — what the API server alone costs for the receiver's one write.
    const raw = await rawApplies(env, owner, deliveries.length, options.concurrency);

    // Open loop, each rate once the writes before it are done and the cluster has settled.
    // A rate that fails is a note; the flood's figures, measured already, stay.
    const openLoopResults: OpenLoopResult[] = [];
    const openLoopFailures: string[] = [];
    for (const loop of openLoops) {
      try {
        await sleep(settleMs);
        const requests = loop.deliveries.map(serialize);
        const steady = await RawConnections.open(port, options.concurrency);
        const timed = await steady.sendAtRate(requests, loop.perSecond).finally(() => steady.close());
        server.send('idle');
        await server.nextJson(600_000, isIdle);
        server.send('report');
        const report = await server.nextJson<IntakeReport>(120_000, isReport);
        openLoopResults.push({
          perSecond: loop.perSecond, answers: timed.map((a) => a.ms), late: timed.map((a) => a.lateMs), failed: timed.filter((a) => a.status >= 300).length,
          receiver: report.durationsMs, written: report.writes.durationsMs, cpuMsPerDelivery: report.cpuMs / Math.max(requests.length, 1),
        });
      } catch (err) {
        openLoopFailures.push(`the open loop at ${loop.perSecond}/s failed: ${(err as Error).message}`);
      }
    }

    const client = answers.map((a) => a.ms);
    const s = summarize(client);
    const r = summarize(raw);
    const serverSide = summarize(inside.durationsMs);
    const recorded = summarize(inside.writes.durationsMs);
    const failed = answers.filter((a) => a.status >= 300).length;
    const receiverPauses = summarizeGcPauses(inside.gcPauses, ...answering);
    const stalls = slowestAnswerGroups(answers);
    return {
      scenario: 1,
      title: 'Webhook intake',
      figures: [
        { scenario: 1, name: 'webhook answer p50', value: s.p50, unit: 'ms' },
        { scenario: 1, name: 'webhook answer p99', value: s.p99, unit: 'ms', target: { op: '<=', value: 20, text: 'p99 ≤ 20 ms' } },
        { scenario: 1, name: 'webhook answer max', value: s.max, unit: 'ms' },
        { scenario: 1, name: 'receiver-side p50 (body read → answer)', value: serverSide.p50, unit: 'ms' },
        { scenario: 1, name: 'receiver-side p99', value: serverSide.p99, unit: 'ms' },
        { scenario: 1, name: 'delivery → recorded in the cluster p50 (writer: accepted → written)', value: recorded.p50, unit: 'ms' },
        { scenario: 1, name: 'delivery → recorded in the cluster p99', value: recorded.p99, unit: 'ms' },
        { scenario: 1, name: `all ${deliveries.length.toLocaleString('en-US')} recorded after (first delivery sent → last write done)`, value: recordedMs / 1000, unit: 's' },
        { scenario: 1, name: 'all answered after (first delivery sent → last answer)', value: wallMs / 1000, unit: 's' },
        { scenario: 1, name: 'writes that failed (refused for good)', value: inside.writes.failed, unit: 'count' },
        { scenario: 1, name: 'write retries (transient failures)', value: inside.writes.retries, unit: 'count' },
        { scenario: 1, name: 'receiver process CPU per delivery (answer + write)', value: inside.cpuMs / deliveries.length, unit: 'ms' },
        { scenario: 1, name: 'bare PreviewEnvironment apply p50 (same concurrency, no receiver)', value: r.p50, unit: 'ms' },
        { scenario: 1, name: 'bare PreviewEnvironment apply p99', value: r.p99, unit: 'ms' },
        { scenario: 1, name: 'webhook answer ÷ bare apply (p50)', value: ratio(s.p50, r.p50), unit: 'ratio', note: 'same run' },
        { scenario: 1, name: 'webhook answer ÷ bare apply (p99)', value: ratio(s.p99, r.p99), unit: 'ratio', note: 'same run' },
        { scenario: 1, name: 'deliveries per second', value: deliveries.length / (wallMs / 1000), unit: 'count' },
        { scenario: 1, name: 'slowest 1 % of answers: groups read together (each within 1 ms of the one before)', value: stalls.groups, unit: 'count', note: `${stalls.slowest} answers; the largest group ${stalls.largest}` },
        { scenario: 1, name: 'receiver GC pauses during the answers: longest', value: receiverPauses.longestMs, unit: 'ms', note: `${receiverPauses.count} pauses, ${receiverPauses.totalMs.toFixed(0)} ms in all` },
        { scenario: 1, name: "the bench client's own GC pauses during the answers: longest", value: clientPauses.longestMs, unit: 'ms', note: `${clientPauses.count} pauses, ${clientPauses.totalMs.toFixed(0)} ms in all` },
        ...(schedule ? [
          { scenario: 1, name: 'receiver main thread during the answers: on a CPU', value: schedule.onCpuMs / 1000, unit: 's' as const },
          { scenario: 1, name: 'receiver main thread during the answers: runnable, waiting for a CPU', value: schedule.waitingMs / 1000, unit: 's' as const },
          { scenario: 1, name: 'receiver main thread: mean wait for a CPU per time slice', value: schedule.slices > 0 ? schedule.waitingMs / schedule.slices : 0, unit: 'ms' as const },
        ] : []),
        ...openLoopResults.flatMap((o) => {
          const a = summarize(o.answers);
          const w = summarize(o.written);
          const late = summarize(o.late);
          const at = `at ${o.perSecond}/s (open loop)`;
          return [
            { scenario: 1, name: `webhook answer p50 ${at}`, value: a.p50, unit: 'ms' as const, note: `${o.answers.length} deliveries` },
            { scenario: 1, name: `webhook answer p99 ${at}`, value: a.p99, unit: 'ms' as const, note: `max ${a.max.toFixed(1)} ms` },
            { scenario: 1, name: `… the client's lateness writing a request (within the answer time), p99 ${at}`, value: late.p99, unit: 'ms' as const, note: `max ${late.max.toFixed(1)} ms` },
            { scenario: 1, name: `… receiver-side p99 (body read → answer) ${at}`, value: summarize(o.receiver).p99, unit: 'ms' as const },
            { scenario: 1, name: `delivery → recorded in the cluster p99 ${at}`, value: w.p99, unit: 'ms' as const, note: `p50 ${w.p50.toFixed(1)} ms` },
            { scenario: 1, name: `receiver process CPU per delivery ${at}`, value: o.cpuMsPerDelivery, unit: 'ms' as const },
            { scenario: 1, name: `non-2xx answers ${at}`, value: o.failed, unit: 'count' as const },
          ];
        }),
        { scenario: 1, name: 'non-2xx answers', value: failed, unit: 'count' },
        { scenario: 1, name: 'PreviewEnvironment writes (audit log)', value: writes, unit: 'count' },
      ],
      samples: {
        'S1 webhook answer (client)': client, 'S1 webhook answer (receiver)': inside.durationsMs,
        'S1 delivery → recorded (writer)': inside.writes.durationsMs, 'S1 bare PreviewEnvironment apply': raw,
        ...Object.fromEntries(openLoopResults.map((o) => [`S1 webhook answer at ${o.perSecond}/s (open loop)`, o.answers])),
      },
      notes: [
        `${deliveries.length} pull_request.opened deliveries for distinct PRs, ${options.concurrency} concurrent, keep-alive HTTP/1.1 on loopback from a raw-socket client (bench/raw-posts.ts: pre-serialised requests, answers read off the socket — Node's http client would add 0.3–0.5 ms of CPU per request on these cores); receiver in its own process; built and signed beforehand in ${(buildMs / 1000).toFixed(1)} s; ${warmup.length} more for other PRs sent and written before the clock starts (V8 compiles the hot paths, as in a running operator).`,
        `Receiver results: ${Object.entries(inside.results).map(([k, v]) => `${k} × ${v}`).join(', ')}.`,
        `Writes after the answer (EnvironmentWriter, 8 in flight): ${Object.entries(inside.writes.results).map(([k, v]) => `${k} × ${v}`).join(', ') || 'none'}; ${inside.writes.pending} still pending at the report.`,
        schedule
          ? `The receiver's main thread while the answers went out (${(wallMs / 1000).toFixed(2)} s): ${(schedule.onCpuMs / 1000).toFixed(2)} s on a CPU and ${(schedule.waitingMs / 1000).toFixed(2)} s runnable but waiting for one, in ${schedule.slices} time slices (/proc/<pid>/task/<pid>/schedstat): it had work ${(100 * (schedule.onCpuMs + schedule.waitingMs) / wallMs).toFixed(0)} % of the time and a core for ${(100 * schedule.onCpuMs / Math.max(schedule.onCpuMs + schedule.waitingMs, 1e-9)).toFixed(0)} % of that; the API server, etcd and the client had the rest.`
          : 'The kernel keeps no schedstat here: the receiver\'s time waiting for a CPU is not measured.',
        `The slowest 1 % (${stalls.slowest} answers) were read in ${stalls.groups} group${stalls.groups === 1 ? '' : 's'} (the largest ${stalls.largest}), each answer within 1 ms of the one before: with ${options.concurrency} always in flight, a stall of the receiver's thread or of the client delays every request in flight at once, so a few stalls set the p99. Garbage-collector pauses while the answers went out: the receiver ${receiverPauses.count} (longest ${receiverPauses.longestMs.toFixed(1)} ms, ${receiverPauses.totalMs.toFixed(0)} ms in all), the bench's client ${clientPauses.count} (longest ${clientPauses.longestMs.toFixed(1)} ms).`,
        ...openLoopFailures,
        ...(openLoopResults.length > 0 ? [`Open loop: after the flood, deliveries for other PRs sent at a steady ${openLoopResults.map((o) => `${o.perSecond}`).join(' and ')} per second for ${options.openLoop.seconds} s each, after the bare applies below and ${settleMs / 1000} s after the writes before were done, as GitHub sends them: each is due at its time whether or not the earlier ones were answered, goes out on an idle connection of the ${options.concurrency} (or waits for one), and is timed from when it was due (bench/raw-posts.ts sendAtRate). The flood above is the issue's closed loop, which keeps the receiver saturated.`] : []),
        `Bare apply: the same count of PreviewEnvironment server-side applies from one KubeClient in the bench process at the same concurrency, right after the deliveries — the API server's share of the answer.`,
      ],
    };
  } finally {
    server.send('stop');
    await server.stop(10_000);
    await deleteEnvironments(env, 'app.kubernetes.io/managed-by=preview-operator').catch(() => {});
    await driver.cleanup();
  }
}
