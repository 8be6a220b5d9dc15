import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { connect } from 'node:net';
import { Readable } from 'node:stream';
import { createDelivery, webhookExample, type WebhookHook } from '../../test/github-emulator/webhook-delivery.js';
import { InvalidError, TransientError } from '../kube/errors.js';
import { resolvePolicyConfig } from '../policy/policy-validation.js';
import { createServer } from '../server/create-server.js';
import { startServer, type RunningServer } from '../server/start-server.js';
import { ApprovalRevoker } from '../github/reporting/approval-revoker.js';
import type { EnvironmentStore } from './environment-store.js';
import { EnvironmentWriter, type EnvironmentWrite } from './environment-writer.js';
import type { PreviewEnvironmentSpec } from '../../constructs/api-types.js';
import { environmentName } from './pull-request-environment-name.js';
import { WebhookReceiver, type WebhookOutcome, type WebhookReceiverOptions } from './webhook-receiver.js';
import { waitFor } from '../../test/support/wait.js';

// The store records calls: these tests are about the HTTP protocol, the decisions and the
// intents handed to the writer; the writes themselves are tested against a real API server
// in test/integration.
class RecordingStore implements EnvironmentStore {
  calls: Array<{ op: 'upsert'; name: string; spec: PreviewEnvironmentSpec } | { op: 'delete'; name: string }> = [];
  /** Thrown by the next calls, one each. */
  failures: Error[] = [];
  /** While set, every write waits for it: a cluster that does not answer. */
  hold?: Promise<void>;
  async upsert(name: string, spec: PreviewEnvironmentSpec): Promise<void> {
    this.calls.push({ op: 'upsert', name, spec });
    await this.behave();
  }
  async delete(name: string): Promise<'deleted' | 'absent'> {
    this.calls.push({ op: 'delete', name });
    await this.behave();
    return 'deleted';
  }
  private async behave(): Promise<void> {
    await this.hold;
    const failure = this.failures.shift();
    if (failure) throw failure;
  }
}

const hook: WebhookHook = { secret: "It's a Secret to Everybody", id: 1, targetType: 'repository', targetId: 2 };
const store = new RecordingStore();
const writes: EnvironmentWrite[] = [];
const writer = new EnvironmentWriter({ store, initialDelayMs: 20, observe: (w) => writes.push(w) });
const removed: unknown[][] = [];
const approvals = new ApprovalRevoker({
  removeLabel: async (...args) => {
    removed.push(args);
  },
});
const outcomes: WebhookOutcome[] = [];
const upserted: string[] = [];
let running: RunningServer;
let url: string;

before(async () => {
  const receiver = new WebhookReceiver({
    secret: ['new-secret', hook.secret],
    writer,
    approvals,
    policy: resolvePolicyConfig(),
    maxBodyBytes: 64 * 1024,
    observe: (o) => outcomes.push(o),
    onUpsert: (spec) => upserted.push(`${spec.repository.name}#${spec.pullRequest.number}@${spec.pullRequest.headSha.slice(0, 7)}`),
  });
  running = await startServer(createServer({ webhook: receiver }));
  url = `${running.url}/api/github/webhooks`;
});

after(async () => {
  await running.close();
  await writer.idle();
  await approvals.close();
});

async function reset(): Promise<void> {
  await writer.idle();
  store.calls = [];
  store.failures = [];
  store.hold = undefined;
  writes.length = 0;
  removed.length = 0;
  upserted.length = 0;
}

/** GitHub's clock: each delivery made describes the pull request a second later than the one before. */
let githubClock = Date.parse('2024-01-01T00:00:00Z');
function nextUpdate(): string {
  githubClock += 1000;
  return new Date(githubClock).toISOString().replace('.000Z', 'Z');
}

function prDelivery(action: string, adjust: (payload: Record<string, any>) => void = () => {}) {
  const payload = webhookExample('pull_request', action) as Record<string, any>;
  payload.action = action;
  // The published examples carry their own (unordered) times; these deliveries happen in order.
  payload.pull_request.updated_at = nextUpdate();
  adjust(payload);
  return createDelivery({ event: 'pull_request', payload, hook });
}

function makeFork(payload: Record<string, any>, labels: string[] = []): void {
  payload.pull_request.head.repo = { ...payload.pull_request.head.repo, id: 999, full_name: 'outsider/Hello-World' };
  payload.pull_request.author_association = 'CONTRIBUTOR';
  payload.pull_request.labels = labels.map((name, i) => ({ id: i, name }));
}

/** A maintainer's `labeled` delivery giving a fork the approval label. */
function approveFork(payload: Record<string, any>): void {
  makeFork(payload, ['preview-approved']);
  payload.label = { id: 0, name: 'preview-approved' };
  payload.sender = { ...payload.sender, login: 'maintainer', id: 77, type: 'User' };
}

const exampleName = environmentName({ owner: 'Codertocat', name: 'Hello-World' }, 2);

test('opened: answered 202 accepted with the environment name and op, then one upsert of the spec', async () => {
  await reset();
  const delivery = prDelivery('opened');
  const res = await delivery.deliver(url);
  assert.equal(res.status, 202);
  const body = JSON.parse(res.body);
  assert.deepEqual(body, {
    result: 'accepted',
    delivery: delivery.id,
    event: 'pull_request',
    action: 'opened',
    environment: exampleName,
    op: 'upsert',
  });
  await writer.idle();
  assert.equal(store.calls.length, 1);
  assert.equal(store.calls[0]!.op, 'upsert');
  assert.equal(store.calls[0]!.op === 'upsert' && store.calls[0]!.spec.pullRequest.headSha, 'ec26c3e57ca3a959ca5aad62de7213c562f8c821');
});

test('every used action is accepted and makes exactly one write; closed deletes', async () => {
  const expected: Record<string, 'upsert' | 'delete'> = {
    opened: 'upsert',
    reopened: 'upsert',
    synchronize: 'upsert',
    ready_for_review: 'upsert',
    converted_to_draft: 'delete',
    labeled: 'upsert',
    unlabeled: 'upsert',
    closed: 'delete',
  };
  for (const [action, op] of Object.entries(expected)) {
    await reset();
    const res = await prDelivery(action, (p) => {
      p.pull_request.draft = action === 'converted_to_draft';
    }).deliver(url);
    assert.equal(res.status, 202, action);
    assert.deepEqual([JSON.parse(res.body).result, JSON.parse(res.body).op], ['accepted', op], action);
    await writer.idle();
    assert.deepEqual(
      store.calls.map((c) => c.op),
      [op],
      action,
    );
  }
});

test('onUpsert hears of each queued spec (run reads .preview/ ahead), not of deletes or ignored deliveries', async () => {
  await reset();
  assert.equal((await prDelivery('synchronize').deliver(url)).status, 202);
  assert.deepEqual(upserted, ['Hello-World#2@ec26c3e'], 'told as soon as it is queued, before the write');
  assert.equal((await prDelivery('closed').deliver(url)).status, 202);
  assert.equal((await prDelivery('opened', (p) => makeFork(p)).deliver(url)).status, 202);
  assert.deepEqual(upserted, ['Hello-World#2@ec26c3e'], 'a delete is not');
  await writer.idle();
});

test('edited: a base change rewrites the spec, a title edit does nothing', async () => {
  await reset();
  const retarget = await prDelivery('edited', (p) => {
    p.pull_request.base.ref = 'release/2';
    p.changes = { base: { ref: { from: 'master' }, sha: { from: 'a'.repeat(40) } } };
  }).deliver(url);
  assert.equal(retarget.status, 202);
  await writer.idle();
  assert.equal(store.calls.length, 1);
  assert.equal(store.calls[0]!.op === 'upsert' && store.calls[0]!.spec.pullRequest.baseRef, 'release/2');
  await reset();
  const title = await prDelivery('edited', (p) => {
    p.changes = { title: { from: 'old' } };
  }).deliver(url);
  assert.equal(title.status, 202);
  assert.equal(JSON.parse(title.body).result, 'unused');
  await writer.idle();
  assert.deepEqual(store.calls, []);
});

test('a fork without approval: its environment is deleted (made sure not to exist)', async () => {
  await reset();
  const res = await prDelivery('opened', (p) => makeFork(p)).deliver(url);
  assert.equal(res.status, 202);
  assert.equal(JSON.parse(res.body).op, 'delete');
  assert.match(JSON.parse(res.body).reason, /forks need a maintainer's approval/);
  await writer.idle();
  assert.deepEqual(store.calls, [{ op: 'delete', name: exampleName }]);
});

test('a new push from an approved fork deletes the environment and removes the label after answering', async () => {
  await reset();
  const res = await prDelivery('synchronize', (p) => makeFork(p, ['bug', 'preview-approved'])).deliver(url);
  assert.equal(res.status, 202);
  const body = JSON.parse(res.body);
  assert.deepEqual([body.result, body.op], ['accepted', 'delete']);
  assert.equal(body.approvalRevoked, true);
  await writer.idle();
  assert.deepEqual(store.calls, [{ op: 'delete', name: exampleName }]);
  await approvals.idle();
  assert.deepEqual(removed, [['Codertocat', 'Hello-World', 2, 'preview-approved']]);
  await reset();
  const labeled = await prDelivery('labeled', approveFork).deliver(url);
  assert.equal(JSON.parse(labeled.body).op, 'upsert', 'approving again brings it back');
  await approvals.idle();
  assert.deepEqual(removed, []);
});

test("a fork retargeted to another base loses its approval: that base's configuration was not approved", async () => {
  await reset();
  const labeled = await prDelivery('labeled', approveFork).deliver(url);
  assert.equal(JSON.parse(labeled.body).op, 'upsert');
  await reset();
  // The author (any PR author may) moves the pull request to a base branch whose .preview/ no maintainer approved.
  const retarget = await prDelivery('edited', (p) => {
    makeFork(p, ['preview-approved']);
    p.pull_request.base.ref = 'experimental';
    p.changes = { base: { ref: { from: 'master' }, sha: { from: 'a'.repeat(40) } } };
  }).deliver(url);
  const body = JSON.parse(retarget.body);
  assert.deepEqual([body.result, body.op, body.approvalRevoked], ['accepted', 'delete', true]);
  assert.match(body.reason, /given on another base branch/);
  await writer.idle();
  assert.deepEqual(store.calls, [{ op: 'delete', name: exampleName }]);
  await approvals.idle();
  assert.deepEqual(removed, [['Codertocat', 'Hello-World', 2, 'preview-approved']]);
  // A later delivery at the same head, the label not yet gone from its payload: the approval is not remembered.
  await reset();
  const later = await prDelivery('ready_for_review', (p) => {
    makeFork(p, ['preview-approved']);
    p.pull_request.base.ref = 'experimental';
  }).deliver(url);
  assert.equal(JSON.parse(later.body).op, 'delete');
  await writer.idle();
  assert.deepEqual(store.calls, [{ op: 'delete', name: exampleName }]);
});

test('a retarget whose own delivery never came (another replica, a 503) is seen at the next delivery: no approval', async () => {
  await reset();
  const labeled = await prDelivery('labeled', approveFork).deliver(url);
  assert.equal(JSON.parse(labeled.body).op, 'upsert');
  await reset();
  // A bot adds another label after the author retargeted the pull request; the edited delivery went elsewhere.
  const later = await prDelivery('labeled', (p) => {
    makeFork(p, ['preview-approved', 'size/M']);
    p.label = { id: 1, name: 'size/M' };
    p.sender = { ...p.sender, login: 'labeler[bot]', type: 'Bot' };
    p.pull_request.base.ref = 'experimental';
  }).deliver(url);
  const body = JSON.parse(later.body);
  assert.deepEqual([body.op, body.approvalRevoked], ['delete', true]);
  await writer.idle();
  assert.deepEqual(store.calls, [{ op: 'delete', name: exampleName }]);
  await approvals.idle();
  assert.deepEqual(removed, [['Codertocat', 'Hello-World', 2, 'preview-approved']]);
});

test("an approval label a fork's author (or a bot) adds approves nothing, and is removed", async () => {
  for (const sender of [undefined, { login: 'labeler[bot]', id: 78, type: 'Bot' }]) {
    await reset();
    // The author has triage access to the base repository (it can label its own pull request), or a workflow labels it.
    const res = await prDelivery('labeled', (p) => {
      makeFork(p, ['preview-approved']);
      p.label = { id: 0, name: 'preview-approved' };
      if (sender) p.sender = { ...p.sender, ...sender };
      else assert.equal(p.sender.login, p.pull_request.user.login, 'sent by the author');
    }).deliver(url);
    const body = JSON.parse(res.body);
    assert.deepEqual([body.result, body.op, body.approvalRevoked], ['accepted', 'delete', true], JSON.stringify(sender));
    assert.match(body.reason, /given by the pull request's author or a bot, not a maintainer/);
    await writer.idle();
    assert.deepEqual(store.calls, [{ op: 'delete', name: exampleName }]);
    await approvals.idle();
    assert.deepEqual(removed, [['Codertocat', 'Hello-World', 2, 'preview-approved']]);
  }
});

test("a maintainer withdraws the approval; the author's label brings nothing back", async () => {
  await reset();
  assert.equal(JSON.parse((await prDelivery('labeled', approveFork).deliver(url)).body).op, 'upsert');
  await reset();
  const withdrawn = await prDelivery('unlabeled', (p) => {
    makeFork(p, []);
    p.label = { id: 0, name: 'preview-approved' };
    p.sender = { ...p.sender, login: 'maintainer', type: 'User' };
  }).deliver(url);
  assert.equal(JSON.parse(withdrawn.body).op, 'delete');
  await reset();
  // The author (triage access) adds it again at the same head: no approval, and the label goes.
  const relabeled = await prDelivery('labeled', (p) => {
    makeFork(p, ['preview-approved']);
    p.label = { id: 0, name: 'preview-approved' };
  }).deliver(url);
  const body = JSON.parse(relabeled.body);
  assert.deepEqual([body.op, body.approvalRevoked], ['delete', true]);
  await writer.idle();
  assert.deepEqual(store.calls, [{ op: 'delete', name: exampleName }]);
  await approvals.idle();
  assert.deepEqual(removed, [['Codertocat', 'Hello-World', 2, 'preview-approved']]);
  // Nor does a later delivery at that head carrying the label before its removal lands.
  await reset();
  const later = await prDelivery('ready_for_review', (p) => makeFork(p, ['preview-approved'])).deliver(url);
  assert.equal(JSON.parse(later.body).op, 'delete');
  await writer.idle();
});

test('a repeated delivery id is answered 200 with no effect', async () => {
  await reset();
  const delivery = prDelivery('opened');
  assert.equal((await delivery.deliver(url)).status, 202);
  const again = await delivery.deliver(url);
  assert.equal(again.status, 200);
  assert.equal(JSON.parse(again.body).result, 'duplicate');
  await writer.idle();
  assert.equal(store.calls.length, 1);
});

// An attacker who captured a signed delivery (a proxy log, a leaked request dump) re-sends its
// exact bytes and signature under a fresh X-GitHub-Delivery id, which the signature does not cover.
function replay(delivery: ReturnType<typeof prDelivery>) {
  return delivery.deliver(url, { headers: { 'x-github-delivery': randomUUID() } });
}

const shaA = 'a'.repeat(40);
const shaB = 'b'.repeat(40);
const pushOf = (sha: string) =>
  prDelivery('synchronize', (p) => {
    p.pull_request.head.sha = sha;
  });

test('replay: an older push re-sent under a new delivery id is answered 200 stale and writes nothing', async () => {
  await reset();
  const old = pushOf(shaA);
  const current = pushOf(shaB);
  assert.equal((await old.deliver(url)).status, 202);
  assert.equal((await current.deliver(url)).status, 202);
  await writer.idle();
  const res = await replay(old);
  assert.equal(res.status, 200, 'a 2xx: GitHub must not retry it');
  const body = JSON.parse(res.body);
  assert.deepEqual([body.result, body.environment], ['stale', exampleName]);
  assert.match(body.reason, /older than the .* already recorded/);
  await writer.idle();
  const shas = store.calls.map((c) => c.op === 'upsert' && c.spec.pullRequest.headSha);
  assert.deepEqual(shas, [shaA, shaB], 'no third write: the environment keeps B');
  assert.equal(writer.pending, 0);
});

test('replay: answered stale even when it arrives while the newer write is still on its way', async () => {
  await reset();
  const old = pushOf(shaA);
  await old.deliver(url);
  await writer.idle();
  let release!: () => void;
  store.hold = new Promise((resolve) => {
    release = resolve;
  });
  try {
    assert.equal((await pushOf(shaB).deliver(url)).status, 202);
    assert.equal(JSON.parse((await replay(old)).body).result, 'stale');
  } finally {
    release();
  }
  await writer.idle();
  assert.deepEqual(
    store.calls.map((c) => c.op === 'upsert' && c.spec.pullRequest.headSha),
    [shaA, shaB],
  );
});

test('replay: a closed re-sent after a newer reopened does not delete; an opened re-sent after the closed does not revive', async () => {
  await reset();
  const closed = prDelivery('closed');
  const reopened = prDelivery('reopened');
  await closed.deliver(url);
  await reopened.deliver(url);
  assert.equal(JSON.parse((await replay(closed)).body).result, 'stale');
  await writer.idle();
  assert.deepEqual(
    store.calls.map((c) => c.op),
    ['delete', 'upsert'],
  );

  await reset();
  const closedAgain = prDelivery('closed');
  await closedAgain.deliver(url);
  assert.equal(JSON.parse((await replay(reopened)).body).result, 'stale');
  await writer.idle();
  assert.deepEqual(
    store.calls.map((c) => c.op),
    ['delete'],
  );
});

test("replay: an old push of an untrusted author does not remove the maintainer's approval again", async () => {
  await reset();
  const old = prDelivery('synchronize', (p) => makeFork(p, ['preview-approved']));
  await old.deliver(url);
  await prDelivery('labeled', approveFork).deliver(url);
  await writer.idle();
  await approvals.idle();
  removed.length = 0;
  assert.equal(JSON.parse((await replay(old)).body).result, 'stale');
  await approvals.idle();
  assert.deepEqual(removed, []);
});

test("replay: a receiver that never saw the newer delivery (restarted, another replica) answers from the cluster's record", async () => {
  await reset();
  const old = pushOf(shaA);
  const current = pushOf(shaB);
  const updatedAt = (current.payload.pull_request as { updated_at: string }).updated_at;
  const recorded = {
    apiVersion: 'preview.alien6.io/v1alpha1',
    kind: 'PreviewEnvironment',
    metadata: { name: exampleName },
    spec: { pullRequest: { headSha: shaB, updatedAt } },
  };
  const environments = { get: (name: string) => (name === exampleName ? recorded : undefined) };
  const fresh = new WebhookReceiver({ secret: hook.secret, writer, approvals, policy: resolvePolicyConfig(), environments });
  const answer = fresh.receive({ headers: old.headers, body: Buffer.from(old.body) });
  assert.deepEqual([answer.status, answer.body.result], [200, 'stale']);
  const again = fresh.receive({ headers: { ...current.headers, 'x-github-delivery': randomUUID() }, body: Buffer.from(current.body) });
  assert.deepEqual([again.status, again.body.result], [202, 'accepted'], 'the recorded state itself is not stale');
  await writer.idle();
  assert.deepEqual(
    store.calls.map((c) => c.op === 'upsert' && c.spec.pullRequest.headSha),
    [shaB],
  );
});

test('two descriptions with the same updated_at (GitHub counts seconds) are both accepted: the later one is written', async () => {
  await reset();
  const first = pushOf(shaA);
  const sameSecond = (first.payload.pull_request as { updated_at: string }).updated_at;
  const second = prDelivery('synchronize', (p) => {
    p.pull_request.head.sha = shaB;
    p.pull_request.updated_at = sameSecond;
  });
  assert.equal(JSON.parse((await first.deliver(url)).body).result, 'accepted');
  assert.equal(JSON.parse((await second.deliver(url)).body).result, 'accepted');
  await writer.idle();
  const last = store.calls.at(-1)!;
  assert.equal(last.op === 'upsert' && last.spec.pullRequest.headSha, shaB);
});

test('protocol errors: 401, 415, 400, 413 — and no write', async () => {
  await reset();
  const delivery = prDelivery('opened');
  const cases: Array<[string, Promise<{ status: number }>, number]> = [
    ['missing signature', delivery.deliver(url, { headers: { 'x-hub-signature-256': undefined } }), 401],
    [
      'wrong secret',
      createDelivery({ event: 'pull_request', payload: delivery.payload, hook: { ...hook, secret: 'guess' } }).deliver(url),
      401,
    ],
    ['tampered body', delivery.deliver(url, { body: delivery.body.replace('"opened"', '"closed"') }), 401],
    ['form encoded', delivery.deliver(url, { headers: { 'content-type': 'application/x-www-form-urlencoded' } }), 415],
    ['no event header', delivery.deliver(url, { headers: { 'x-github-event': undefined } }), 400],
    [
      'too large',
      createDelivery({ event: 'pull_request', payload: { ...delivery.payload, padding: 'x'.repeat(70 * 1024) }, hook }).deliver(url),
      413,
    ],
  ];
  for (const [what, response, status] of cases) assert.equal((await response).status, status, what);
  const malformed = '{"action": "opened",';
  const { signBody } = await import('../../test/github-emulator/webhook-delivery.js');
  const res = await delivery.deliver(url, {
    body: malformed,
    headers: { 'x-hub-signature-256': signBody(hook.secret, malformed).sha256, 'x-github-delivery': 'malformed-1' },
  });
  assert.equal(res.status, 400);
  await writer.idle();
  assert.deepEqual(store.calls, []);
});

test('a body over the limit without Content-Length (chunked) is refused as it grows', async () => {
  const body = Readable.from(
    (function* () {
      for (let i = 0; i < 100; i++) yield Buffer.alloc(1024, 'x');
    })(),
  );
  const res = await fetch(url, { method: 'POST', body, duplex: 'half', headers: { 'content-type': 'application/json' } } as RequestInit);
  assert.equal(res.status, 413);
});

/** A receiver of its own with a budget of 3 bodies of up to 64 KiB, served; `options` add to it. */
async function smallBudgetServer(options: Partial<WebhookReceiverOptions> = {}) {
  const receiver = new WebhookReceiver({
    secret: hook.secret,
    writer,
    approvals,
    policy: resolvePolicyConfig(),
    maxBodyBytes: 64 * 1024,
    maxBodyBytesInFlight: 192 * 1024,
    ...options,
  });
  const server = await startServer(createServer({ webhook: receiver }));
  return { server, target: new URL(`${server.url}/api/github/webhooks`) };
}

/** `count` uploads announcing 64 KiB that send `sentBytes` of it and then nothing; each one's answer once its socket closes. */
function holdUploads(target: URL, count: number, sentBytes: number) {
  const answers: string[] = [];
  const sockets = Array.from({ length: count }, () => {
    const socket = connect({ host: target.hostname, port: Number(target.port) });
    const head = `POST ${target.pathname} HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\ncontent-length: ${64 * 1024}\r\n\r\n`;
    socket.write(head + 'x'.repeat(sentBytes));
    let text = '';
    socket.on('data', (d: Buffer) => (text += d.toString('utf8')));
    socket.on('close', () => answers.push(text));
    socket.on('error', () => {});
    return socket;
  });
  return { sockets, answers };
}

test('many large unsigned uploads at once: past the in-flight budget they are answered 503 before they fill the memory', async () => {
  // Its own receiver: a budget of 3 bodies of up to 64 KiB; five uploads of 60 KiB held open, then a signed delivery.
  const { server, target } = await smallBudgetServer();
  const { sockets, answers } = holdUploads(target, 5, 60 * 1024);
  // Whichever order they are read in, three fit and two do not; the three stay unanswered, held.
  await waitFor('two uploads refused', () => answers.length >= 2, { timeoutMs: 10_000 });
  await new Promise((resolve) => setTimeout(resolve, 300));
  assert.equal(answers.length, 2);
  for (const answer of answers) assert.match(answer, /^HTTP\/1\.1 503 [^]*"result":"unavailable"[^]*being read at once/);
  for (const socket of sockets) socket.destroy(); // the held bytes go back to the budget
  await reset();
  const delivered = await prDelivery('opened').deliver(target.href);
  assert.equal(delivered.status, 202, 'once the uploads are gone, a delivery is read again');
  await writer.idle();
  await server.close();
});

test('uploads held open past the body deadline are answered 408 and let go of the budget, so deliveries are read again', async () => {
  // Three uploads fill the budget and never finish; GitHub waits 10 s for an answer, so a body
  // still arriving after the deadline is no delivery: the uploader must resend to hold the budget.
  const { server, target } = await smallBudgetServer({ bodyDeadlineMs: 1_000 });
  const { sockets, answers } = holdUploads(target, 3, 64 * 1024 - 1); // all but the last byte, and then nothing
  try {
    await reset();
    await new Promise((resolve) => setTimeout(resolve, 300));
    const starved = await prDelivery('opened').deliver(target.href);
    assert.equal(starved.status, 503, 'while the uploads hold the budget');
    await waitFor('the held uploads answered', () => answers.length === 3, { timeoutMs: 5_000 });
    for (const answer of answers) assert.match(answer, /^HTTP\/1\.1 408 [^]*did not arrive within 1000 ms/);
    const delivered = await prDelivery('opened').deliver(target.href);
    assert.equal(delivered.status, 202, 'the budget is free again, with the uploaders still connected');
    await writer.idle();
  } finally {
    for (const socket of sockets) socket.destroy();
    await server.close();
  }
});

test('ping 200, events the operator does not use 202, other pull_request actions 202', async () => {
  await reset();
  const ping = await createDelivery({ event: 'ping', payload: webhookExample('ping'), hook }).deliver(url);
  assert.equal(ping.status, 200);
  assert.equal(JSON.parse(ping.body).result, 'pong');
  const issues = await createDelivery({ event: 'issues', payload: webhookExample('issues', 'opened'), hook }).deliver(url);
  assert.equal(issues.status, 202);
  const assigned = await prDelivery('assigned').deliver(url);
  assert.equal(assigned.status, 202);
  await writer.idle();
  assert.deepEqual(store.calls, []);
});

test('a payload it cannot read → 400, nothing queued, and the id stays free for a corrected redelivery', async () => {
  await reset();
  const { signBody } = await import('../../test/github-emulator/webhook-delivery.js');
  const good = prDelivery('opened');
  const broken = JSON.stringify({ ...good.payload, pull_request: { number: 'two' } });
  const res = await good.deliver(url, { body: broken, headers: { 'x-hub-signature-256': signBody(hook.secret, broken).sha256 } });
  assert.equal(res.status, 400);
  assert.equal(JSON.parse(res.body).result, 'bad-request');
  assert.equal(writer.pending, 0);
  const redelivered = await good.deliver(url);
  assert.equal(redelivered.status, 202, 'the same delivery id, now readable, is accepted');
  await writer.idle();
  assert.equal(store.calls.length, 1);
});

// The timeout: an answer that waited for the held write would never come.
test('a cluster that does not answer does not delay the answer: 202 first, the write after', { timeout: 15_000 }, async () => {
  await reset();
  let answer!: () => void;
  store.hold = new Promise((resolve) => {
    answer = resolve;
  });
  try {
    const res = await prDelivery('opened').deliver(url);
    assert.equal(res.status, 202, 'answered while the write waits for the cluster');
    assert.equal(writer.pending, 1, 'the write is still under way');
    assert.equal(writes.length, 0, 'nothing written yet');
    await new Promise((r) => setTimeout(r, 600));
  } finally {
    answer(); // also when an assertion failed: later tests wait for the writer to be idle
  }
  await writer.idle();
  assert.deepEqual(
    writes.map((w) => [w.result, w.attempts]),
    [['upserted', 1]],
  );
  assert.ok(writes[0]!.durationMs >= 550, 'timed from submit to written');
});

test('a write the cluster fails transiently is retried after the answer until it lands', async () => {
  await reset();
  store.failures = [new TransientError('connection refused', 0, 'ECONNREFUSED'), new TransientError('etcd timeout', 504, 'Timeout')];
  const res = await prDelivery('opened').deliver(url);
  assert.equal(res.status, 202, "the cluster's trouble is not GitHub's: no 503");
  assert.doesNotMatch(res.body, /connection refused/, 'cluster details stay in the log');
  await writer.idle();
  assert.deepEqual(
    store.calls.map((c) => c.op),
    ['upsert', 'upsert', 'upsert'],
  );
  assert.deepEqual(
    writes.map((w) => [w.result, w.attempts]),
    [['upserted', 3]],
  );
});

test('a write the cluster refuses for good is not retried; the delivery was still accepted', async () => {
  await reset();
  store.failures = [new InvalidError('spec.pullRequest.headSha: Invalid value', 422, 'Invalid')];
  const res = await prDelivery('opened').deliver(url);
  assert.equal(res.status, 202);
  await writer.idle();
  assert.equal(store.calls.length, 1);
  assert.deepEqual(
    writes.map((w) => [w.environment, w.result, w.attempts]),
    [[exampleName, 'failed', 1]],
  );
});

test('a full writer (the cluster away under a flood) answers 503 unavailable, queues nothing, and leaves the id free for a redelivery', async () => {
  const held = new RecordingStore();
  let answer!: () => void;
  held.hold = new Promise((resolve) => {
    answer = resolve;
  });
  const small = new EnvironmentWriter({ store: held, concurrency: 1, maxWaiting: 1 });
  const receiver = new WebhookReceiver({ secret: hook.secret, writer: small, approvals, policy: resolvePolicyConfig() });
  const numbered = (n: number) =>
    prDelivery('opened', (p) => {
      p.number = n;
      p.pull_request.number = n;
    });
  const receive = (d: ReturnType<typeof prDelivery>) => receiver.receive({ headers: d.headers, body: Buffer.from(d.body) });
  try {
    assert.equal(receive(numbered(11)).status, 202, 'in flight');
    assert.equal(receive(numbered(12)).status, 202, 'waiting');
    const refused = numbered(13);
    const full = receive(refused);
    assert.equal(full.status, 503);
    assert.equal(full.body.result, 'unavailable');
    assert.equal(full.headers['retry-after'], '60');
    assert.equal(small.pending, 2, 'nothing more queued');
    answer();
    await small.idle();
    assert.equal(receive(refused).status, 202, 'redelivered once there is room: not a duplicate');
  } finally {
    answer();
    await small.idle();
  }
});

test('every request is observed with its result and duration', async () => {
  await reset();
  outcomes.length = 0;
  const delivery = prDelivery('opened');
  await delivery.deliver(url);
  await delivery.deliver(url, { headers: { 'x-hub-signature-256': 'sha256=00' } });
  assert.deepEqual(
    outcomes.map((o) => [o.status, o.result, o.delivery, o.event]),
    [
      [202, 'accepted', delivery.id, 'pull_request'],
      [401, 'unauthorized', delivery.id, 'pull_request'],
    ],
  );
  assert.ok(outcomes.every((o) => o.durationMs >= 0));
  // The headers are not signed: what the log keeps of them is bounded.
  await delivery.deliver(url, {
    headers: { 'x-hub-signature-256': 'sha256=00', 'x-github-event': 'e'.repeat(4000), 'x-github-delivery': 'd'.repeat(4000) },
  });
  assert.deepEqual(
    outcomes.slice(2).map((o) => [o.status, o.event, o.delivery]),
    [[401, 'e'.repeat(100), 'd'.repeat(100)]],
  );
});

test('a delivery id that is no id (the header is not signed) is refused before the dedupe keeps it', async () => {
  await reset();
  const captured = prDelivery('opened');
  for (const id of ['x'.repeat(65), 'a b', 'id\u00e9', '../etc']) {
    const res = await captured.deliver(url, { headers: { 'x-github-delivery': id } });
    assert.equal(res.status, 400, id);
    assert.match(JSON.parse(res.body).reason, /not a delivery id/);
  }
  // The event name alike: the answer and its log would repeat it.
  const event = await captured.deliver(url, { headers: { 'x-github-delivery': randomUUID(), 'x-github-event': `e-${'x'.repeat(8000)}` } });
  assert.equal(event.status, 400);
  assert.ok(event.body.length < 300, `the answer repeats no header: ${event.body.length} bytes`);
  await writer.idle();
  assert.deepEqual(store.calls, [], 'nothing queued');
  assert.equal((await captured.deliver(url, { headers: { 'x-github-delivery': randomUUID() } })).status, 202);
  await writer.idle();
});

test('an empty secret is refused at construction', () => {
  assert.throws(() => new WebhookReceiver({ secret: '', writer, approvals, policy: resolvePolicyConfig() }), /secret/);
  assert.throws(() => new WebhookReceiver({ secret: [], writer, approvals, policy: resolvePolicyConfig() }), /secret/);
});
