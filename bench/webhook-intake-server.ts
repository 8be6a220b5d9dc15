// The webhook receiver in a process of its own, assembled as the operator assembles it
// (WebhookReceiver + EnvironmentWriter + KubeEnvironmentStore + createServer + startServer), so
// scenario 1 times the server and not the benchmark's client sharing its event loop.
// Input: BENCH_INTAKE (JSON: kubeconfigPath, secret, githubUrl, githubToken).
// Output: one JSON line `{ "url": ... }` once listening; on stdin "idle", `{ "idle": true }` once
// every accepted delivery's write is done; on stdin "report", one JSON line with the receiver's
// own answer times and results, the writer's writes (submit → written, result, attempts) and
// the process's CPU time and its garbage collector's pauses since the last report; on stdin
// "stop", exits.
import { createInterface } from 'node:readline';
import { ApprovalRevoker } from '../src/github/reporting/approval-revoker.js';
import { DeliveryDedupe } from '../src/intake/delivery-dedupe.js';
import { KubeEnvironmentStore } from '../src/intake/environment-store.js';
import { EnvironmentWriter, type EnvironmentWrite } from '../src/intake/environment-writer.js';
import { createLabelRemover } from '../src/github/reporting/label-remover.js';
import { createGitHubClients } from '../src/github/octokit-factory.js';
import { WebhookReceiver, type WebhookOutcome } from '../src/intake/webhook-receiver.js';
import { KubeClient, loadKubeConfig } from '../src/kube/client.js';
import { resolvePolicyConfig } from '../src/policy/policy-validation.js';
import { createServer } from '../src/server/create-server.js';
import { startServer } from '../src/server/start-server.js';
import { GcPauseRecorder } from './gc-pauses.js';

interface IntakeInput {
  kubeconfigPath: string;
  secret: string;
  githubUrl: string;
  githubToken: string;
}

const input = JSON.parse(process.env.BENCH_INTAKE ?? '{}') as IntakeInput;
const client = new KubeClient(await loadKubeConfig({ path: input.kubeconfigPath }));
const github = createGitHubClients({ auth: { type: 'token', token: input.githubToken }, baseUrl: input.githubUrl, throttle: { enabled: false } });
const outcomes: WebhookOutcome[] = [];
const writes: EnvironmentWrite[] = [];
const writer = new EnvironmentWriter({ store: new KubeEnvironmentStore(client), observe: (write) => writes.push(write) });
const receiver = new WebhookReceiver({
  secret: input.secret,
  writer,
  policy: resolvePolicyConfig({}),
  approvals: new ApprovalRevoker({ removeLabel: createLabelRemover(github) }),
  dedupe: new DeliveryDedupe(),
  observe: (outcome) => outcomes.push(outcome),
});
const server = await startServer(createServer({ webhook: receiver }));
const gcPauses = new GcPauseRecorder();
let cpuSince = process.cpuUsage();
process.stdout.write(`${JSON.stringify({ url: `${server.url}/api/github/webhooks` })}\n`);

for await (const line of createInterface({ input: process.stdin })) {
  if (line === 'idle') {
    await writer.idle();
    process.stdout.write(`${JSON.stringify({ idle: true })}\n`);
  } else if (line === 'report') {
    const results: Record<string, number> = {};
    for (const o of outcomes) results[`${o.status} ${o.result}`] = (results[`${o.status} ${o.result}`] ?? 0) + 1;
    const writeResults: Record<string, number> = {};
    for (const w of writes) writeResults[`${w.op} ${w.result}`] = (writeResults[`${w.op} ${w.result}`] ?? 0) + 1;
    const cpu = process.cpuUsage(cpuSince);
    cpuSince = process.cpuUsage();
    process.stdout.write(`${JSON.stringify({
      durationsMs: outcomes.map((o) => o.durationMs),
      results,
      // Answers and writes share this process: what both cost, for the CPU per delivery.
      cpuMs: (cpu.user + cpu.system) / 1000,
      gcPauses: gcPauses.take(),
      writes: {
        // Submit → written; a write refused for good is counted, not timed.
        durationsMs: writes.filter((w) => w.result !== 'failed').map((w) => w.durationMs),
        results: writeResults,
        failed: writes.filter((w) => w.result === 'failed').length,
        retries: writes.reduce((sum, w) => sum + w.attempts - 1, 0),
        pending: writer.pending,
      },
    })}\n`);
    outcomes.length = 0;
    writes.length = 0;
  } else if (line === 'stop') {
    break;
  }
}
await server.close();
await writer.drain(10_000);
client.close();
process.exit(0);
