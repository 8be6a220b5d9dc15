import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { PreviewEnvironmentSpec } from '../../constructs/api-types.js';
import { FakeClock } from '../kube/clock.js';
import { ForbiddenError, InvalidError, TransientError } from '../kube/errors.js';
import type { Logger } from '../kube/logger.js';
import type { DeleteOptions, EnvironmentStore, UpsertOptions } from './environment-store.js';
import { EnvironmentWriter, WriterFullError, type EnvironmentIntent, type EnvironmentWrite } from './environment-writer.js';

// The writer is a pure queue over the EnvironmentStore interface, so a scripted store stands
// in for the cluster here; test/integration/webhook-write-behind.test.ts runs it against the
// real API server.
interface Call {
  op: 'upsert' | 'delete';
  name: string;
  sha?: string;
  deliveredAt?: Date;
  /** A delete's pull request update. */
  updatedAt?: string;
  settle(outcome: { error?: Error; result?: 'deleted' | 'absent' | 'stale' }): void;
}

class ScriptedStore implements EnvironmentStore {
  readonly calls: Call[] = [];
  readonly open: Call[] = [];
  maxInFlight = 0;
  /** Set when two writes for one name were ever in flight together. */
  overlapped: string[] = [];

  upsert(name: string, spec: PreviewEnvironmentSpec, options?: UpsertOptions): Promise<void | 'stale'> {
    const call = { op: 'upsert' as const, name, sha: spec.pullRequest.headSha, deliveredAt: options?.deliveredAt };
    return this.begin(call).then((r) => (r === 'stale' ? r : undefined));
  }

  delete(name: string, options?: DeleteOptions): Promise<'deleted' | 'absent' | 'stale'> {
    return this.begin({ op: 'delete', name, updatedAt: options?.updatedAt }).then((r) => r ?? 'deleted');
  }

  /** The oldest unsettled call for `name`. */
  pending(name: string): Call {
    const call = this.open.find((c) => c.name === name);
    assert.ok(call, `a write for ${name} in flight`);
    return call;
  }

  private begin(fields: Omit<Call, 'settle'>): Promise<'deleted' | 'absent' | 'stale' | undefined> {
    if (this.open.some((c) => c.name === fields.name)) this.overlapped.push(fields.name);
    return new Promise((resolve, reject) => {
      const call: Call = {
        ...fields,
        settle: ({ error, result }) => {
          this.open.splice(this.open.indexOf(call), 1);
          if (error) reject(error);
          else resolve(result);
        },
      };
      this.calls.push(call);
      this.open.push(call);
      this.maxInFlight = Math.max(this.maxInFlight, this.open.length);
    });
  }
}

/** Lets the writer's promise callbacks run. */
const tick = () => new Promise<void>((resolve) => setImmediate(resolve));

function spec(sha: string): PreviewEnvironmentSpec {
  return {
    repository: { owner: 'acme', name: 'shop', cloneUrl: 'https://github.com/acme/shop.git' },
    pullRequest: {
      number: 1,
      headSha: sha,
      headRef: 'feature',
      baseRef: 'main',
      author: 'alice',
      authorAssociation: 'MEMBER',
      labels: [],
      draft: false,
      fork: false,
    },
    ttl: '72h',
  } as PreviewEnvironmentSpec;
}

const upsert = (sha: string, deliveredAt = new Date(0)): EnvironmentIntent => ({ op: 'upsert', spec: spec(sha), deliveredAt });

class RecordingLogger implements Logger {
  readonly lines: Array<{ level: string; fields: Record<string, unknown>; message?: string }> = [];
  debug(fields: object, message?: string) {
    this.lines.push({ level: 'debug', fields: fields as Record<string, unknown>, message });
  }
  info(fields: object, message?: string) {
    this.lines.push({ level: 'info', fields: fields as Record<string, unknown>, message });
  }
  warn(fields: object, message?: string) {
    this.lines.push({ level: 'warn', fields: fields as Record<string, unknown>, message });
  }
  error(fields: object, message?: string) {
    this.lines.push({ level: 'error', fields: fields as Record<string, unknown>, message });
  }
}

function setup(options: { concurrency?: number; maxWaiting?: number } = {}) {
  const store = new ScriptedStore();
  const clock = new FakeClock(1_000_000);
  const writes: EnvironmentWrite[] = [];
  const logger = new RecordingLogger();
  // random 0: each retry waits exactly half the nominal delay, so the schedule is exact.
  const writer = new EnvironmentWriter({ store, clock, logger, random: () => 0, observe: (w) => writes.push(w), ...options });
  return { store, clock, writes, logger, writer };
}

describe('environment writer', () => {
  it('submit returns before the write; the write starts at once when a slot is free', async () => {
    const { store, writer, writes } = setup();
    const deliveredAt = new Date('2026-01-01T00:00:00.000Z');
    writer.submit('pr-1', upsert('a1', deliveredAt));
    assert.equal(writer.pending, 1);
    assert.deepEqual(
      store.calls.map((c) => [c.op, c.name, c.sha, c.deliveredAt]),
      [['upsert', 'pr-1', 'a1', deliveredAt]],
    );
    assert.equal(writes.length, 0, 'nothing finished yet');
    store.pending('pr-1').settle({});
    await tick();
    assert.equal(writer.pending, 0);
    assert.deepEqual(
      writes.map((w) => [w.environment, w.op, w.result, w.attempts]),
      [['pr-1', 'upsert', 'upserted', 1]],
    );
  });

  it('writes for one environment run in order, never two at once', async () => {
    const { store, writer, writes } = setup();
    writer.submit('pr-1', upsert('a1'));
    writer.submit('pr-1', upsert('a2'));
    assert.deepEqual(
      store.calls.map((c) => c.sha),
      ['a1'],
      'the second waits for the write in flight',
    );
    store.pending('pr-1').settle({});
    await tick();
    assert.deepEqual(
      store.calls.map((c) => c.sha),
      ['a1', 'a2'],
      'then runs',
    );
    writer.submit('pr-1', { op: 'delete' });
    store.pending('pr-1').settle({});
    await tick();
    store.pending('pr-1').settle({ result: 'deleted' });
    await tick();
    assert.deepEqual(
      store.calls.map((c) => `${c.op} ${c.sha ?? ''}`.trim()),
      ['upsert a1', 'upsert a2', 'delete'],
    );
    assert.deepEqual(store.overlapped, []);
    assert.deepEqual(
      writes.map((w) => w.result),
      ['upserted', 'upserted', 'deleted'],
    );
  });

  it('coalesces: an intent still waiting is replaced by a newer one, and only the newest is written', async () => {
    const { store, writer, writes, logger } = setup();
    writer.submit('pr-1', upsert('a1'));
    writer.submit('pr-1', upsert('a2'));
    writer.submit('pr-1', upsert('a3'));
    writer.submit('pr-1', { op: 'delete' });
    assert.equal(writer.pending, 2, 'one in flight, one waiting');
    store.pending('pr-1').settle({});
    await tick();
    store.pending('pr-1').settle({ result: 'absent' });
    await tick();
    assert.deepEqual(
      store.calls.map((c) => `${c.op} ${c.sha ?? ''}`.trim()),
      ['upsert a1', 'delete'],
      'a2 and a3 were never written',
    );
    assert.deepEqual(
      writes.map((w) => [w.op, w.result]),
      [
        ['upsert', 'upserted'],
        ['delete', 'absent'],
      ],
    );
    assert.equal(logger.lines.filter((l) => /replaced by a newer one/.test(l.message ?? '')).length, 2, 'each replaced intent is logged');
  });

  it('coalesces behind the concurrency bound too, keeping the first place in line', async () => {
    const { store, writer } = setup({ concurrency: 1 });
    writer.submit('pr-1', upsert('a1'));
    writer.submit('pr-2', upsert('b1'));
    writer.submit('pr-3', upsert('c1'));
    writer.submit('pr-2', upsert('b2'));
    store.pending('pr-1').settle({});
    await tick();
    store.pending('pr-2').settle({});
    await tick();
    store.pending('pr-3').settle({});
    await tick();
    assert.deepEqual(
      store.calls.map((c) => c.sha),
      ['a1', 'b2', 'c1'],
    );
  });

  it('keeps at most `concurrency` writes in flight across environments', async () => {
    const { store, writer, writes } = setup({ concurrency: 3 });
    for (let i = 1; i <= 10; i++) writer.submit(`pr-${i}`, upsert(`s${i}`));
    assert.equal(store.open.length, 3);
    assert.equal(writer.pending, 10);
    while (store.open.length > 0) {
      store.open[0]!.settle({});
      await tick();
      assert.ok(store.open.length <= 3);
    }
    assert.equal(store.maxInFlight, 3);
    assert.equal(writer.pending, 0);
    assert.deepEqual(
      store.calls.map((c) => c.name),
      Array.from({ length: 10 }, (_, i) => `pr-${i + 1}`),
      'first submitted, first written',
    );
    assert.equal(writes.length, 10);
  });

  it('retries a transient failure with exponential backoff, then succeeds; duration counts from submit', async () => {
    const { store, writer, writes, clock, logger } = setup();
    writer.submit('pr-1', upsert('a1'));
    store.pending('pr-1').settle({ error: new TransientError('connection refused', 0, 'ECONNREFUSED') });
    await tick();
    assert.equal(store.calls.length, 1);
    assert.equal(writer.pending, 1, 'still pending while it waits to retry');
    clock.advance(99);
    assert.equal(store.calls.length, 1, 'not before the delay (200 ms, jittered down to half at most)');
    clock.advance(1);
    assert.equal(store.calls.length, 2, 'retried after 100 ms');
    store.pending('pr-1').settle({ error: new TransientError('etcd leader changed', 503, 'ServiceUnavailable') });
    await tick();
    clock.advance(199);
    assert.equal(store.calls.length, 2);
    clock.advance(1);
    assert.equal(store.calls.length, 3, 'the delay doubled');
    clock.advance(5);
    store.pending('pr-1').settle({});
    await tick();
    assert.deepEqual(writes, [{ environment: 'pr-1', source: 'webhook', op: 'upsert', result: 'upserted', attempts: 3, durationMs: 305 }]);
    assert.equal(writer.pending, 0);
    assert.equal(
      logger.lines.filter((l) => l.level === 'warn' && l.fields.environment === 'pr-1').length,
      2,
      'each failed attempt is logged',
    );
  });

  it('an outage of any length: retried every maxDelay until the API server answers, never given up', async () => {
    const { store, writer, writes, clock } = setup();
    writer.submit('pr-1', upsert('a1'));
    // Ten minutes of connection refused: the delay doubles up to its cap (30 s, jittered to 15 s here).
    for (let elapsed = 0; elapsed < 600_000; elapsed += 15_000) {
      store.pending('pr-1').settle({ error: new TransientError('connection refused', 0, 'ECONNREFUSED') });
      await tick();
      clock.advance(15_000);
    }
    assert.equal(writer.pending, 1, 'still owed');
    assert.equal(writes.length, 0, 'never reported as failed');
    store.pending('pr-1').settle({});
    await tick();
    assert.equal(writes[0]!.result, 'upserted');
    assert.ok(writes[0]!.attempts > 30, `${writes[0]!.attempts} attempts`);
  });

  it('bounded: beyond maxWaiting environments a new one is refused (WriterFullError); a newer intent for one waiting still replaces it', async () => {
    const { writer } = setup({ concurrency: 1, maxWaiting: 2 });
    writer.submit('pr-1', upsert('a1')); // in flight
    writer.submit('pr-2', upsert('b1'));
    writer.submit('pr-3', upsert('c1'));
    assert.throws(
      () => writer.submit('pr-4', upsert('d1')),
      (err: unknown) => err instanceof WriterFullError && err.maxWaiting === 2,
    );
    writer.submit('pr-2', upsert('b2'));
    await assert.rejects(writer.write('pr-5', upsert('e1'), 0), WriterFullError, "the resync's writes too");
    assert.equal(writer.pending, 3);
  });

  it('caps the retry delay and waits at least as long as a 429 asks', async () => {
    const { store, writer, clock } = setup();
    writer.submit('pr-1', upsert('a1'));
    const tooMany = new TransientError('slow down', 429, 'TooManyRequests', { details: { retryAfterSeconds: 7 } });
    store.pending('pr-1').settle({ error: tooMany });
    await tick();
    clock.advance(6999);
    assert.equal(store.calls.length, 1);
    clock.advance(1);
    assert.equal(store.calls.length, 2);
    // Attempt 10 would nominally wait 200 ms × 2^9 = 102 s: the cap is 30 s (15 s with this jitter).
    for (let attempt = 2; attempt <= 10; attempt++) {
      store.pending('pr-1').settle({ error: new TransientError('down', 0, 'ECONNREFUSED') });
      await tick();
      clock.advance(15_000);
      assert.equal(store.calls.length, attempt + 1, `attempt ${attempt + 1} within the capped delay`);
    }
  });

  it('a newer intent replaces one waiting to be retried, and runs at once', async () => {
    const { store, writer, writes, clock } = setup();
    writer.submit('pr-1', upsert('a1'));
    store.pending('pr-1').settle({ error: new TransientError('down', 0, 'ECONNREFUSED') });
    await tick();
    writer.submit('pr-1', upsert('a2'));
    assert.deepEqual(
      store.calls.map((c) => c.sha),
      ['a1', 'a2'],
      'no wait for the old backoff',
    );
    store.pending('pr-1').settle({});
    await tick();
    clock.advance(60_000);
    await tick();
    assert.deepEqual(
      store.calls.map((c) => c.sha),
      ['a1', 'a2'],
      'the replaced intent is never retried',
    );
    assert.deepEqual(
      writes.map((w) => [w.result, w.attempts]),
      [['upserted', 1]],
    );
    assert.equal(clock.pending(), 0, 'its retry timer is gone');
  });

  it('a transient failure with a newer intent waiting is not retried: the newer one runs', async () => {
    const { store, writer, clock } = setup();
    writer.submit('pr-1', upsert('a1'));
    writer.submit('pr-1', upsert('a2'));
    store.pending('pr-1').settle({ error: new TransientError('down', 0, 'ECONNRESET') });
    await tick();
    assert.deepEqual(
      store.calls.map((c) => c.sha),
      ['a1', 'a2'],
    );
    store.pending('pr-1').settle({});
    await tick();
    clock.advance(60_000);
    assert.deepEqual(
      store.calls.map((c) => c.sha),
      ['a1', 'a2'],
    );
    assert.equal(writer.pending, 0);
  });

  it('a permanent failure is not retried: logged at error with the environment, counted, observed as failed', async () => {
    const { store, writer, writes, clock, logger } = setup();
    writer.submit('pr-1', upsert('a1'));
    writer.submit('pr-2', { op: 'delete' });
    store.pending('pr-1').settle({ error: new InvalidError('spec.ttl: Invalid value', 422, 'Invalid') });
    store.pending('pr-2').settle({ error: new ForbiddenError('cannot delete', 403, 'Forbidden') });
    await tick();
    clock.advance(120_000);
    await tick();
    assert.equal(store.calls.length, 2, 'no retry');
    assert.equal(writer.pending, 0);
    assert.equal(writer.failures, 2);
    assert.deepEqual(
      writes.map((w) => [w.environment, w.op, w.result, w.attempts]),
      [
        ['pr-1', 'upsert', 'failed', 1],
        ['pr-2', 'delete', 'failed', 1],
      ],
    );
    const errors = logger.lines.filter((l) => l.level === 'error');
    assert.deepEqual(
      errors.map((l) => l.fields.environment),
      ['pr-1', 'pr-2'],
    );
    // A newer intent after a refusal is still written.
    writer.submit('pr-1', upsert('a2'));
    store.pending('pr-1').settle({});
    await tick();
    assert.equal(writes.at(-1)!.result, 'upserted');
  });

  it('idle resolves when nothing waits or is in flight, retries included', async () => {
    const { store, writer, clock } = setup();
    await writer.idle();
    writer.submit('pr-1', upsert('a1'));
    writer.submit('pr-1', upsert('a2'));
    let idle = false;
    void writer.idle().then(() => (idle = true));
    store.pending('pr-1').settle({});
    await tick();
    assert.equal(idle, false, 'a2 still to write');
    store.pending('pr-1').settle({ error: new TransientError('down', 0, 'ECONNREFUSED') });
    await tick();
    assert.equal(idle, false, 'a2 waits to be retried');
    clock.advance(100);
    store.pending('pr-1').settle({});
    await tick();
    assert.equal(idle, true);
  });

  it('drain resolves when idle, or at the deadline with the number left (and says so)', async () => {
    const { store, writer, clock, logger } = setup();
    assert.equal(await writer.drain(1000), 0);
    writer.submit('pr-1', upsert('a1'));
    const done = writer.drain(1000);
    store.pending('pr-1').settle({});
    assert.equal(await done, 0);

    writer.submit('pr-2', upsert('b1'));
    writer.submit('pr-2', upsert('b2'));
    writer.submit('pr-3', upsert('c1'));
    const drained = writer.drain(1000);
    await tick();
    clock.advance(1000);
    assert.equal(await drained, 3, 'pr-2 in flight and waiting, pr-3 in flight');
    assert.ok(logger.lines.some((l) => l.level === 'warn' && l.fields.left === 3 && /resync/.test(l.message ?? '')));
    // It kept accepting: the rest is still written afterwards.
    writer.submit('pr-4', upsert('d1'));
    for (const name of ['pr-2', 'pr-3', 'pr-4']) store.pending(name).settle({});
    await tick();
    store.pending('pr-2').settle({});
    await writer.idle();
    assert.deepEqual(
      store.calls.map((c) => c.sha),
      ['a1', 'b1', 'c1', 'd1', 'b2'],
    );
  });

  it("write (the resync): resolves with the result once written, and the write is observed as the resync's", async () => {
    const { store, writer, writes, clock } = setup();
    const done = writer.write('pr-1', { op: 'upsert', spec: spec('r1') }, clock.now());
    store.pending('pr-1').settle({});
    assert.equal(await done, 'upserted');
    const deleted = writer.write('pr-2', { op: 'delete' }, clock.now());
    store.pending('pr-2').settle({ result: 'absent' });
    assert.equal(await deleted, 'absent');
    assert.deepEqual(
      writes.map((w) => [w.environment, w.source, w.result]),
      [
        ['pr-1', 'resync', 'upserted'],
        ['pr-2', 'resync', 'absent'],
      ],
    );
  });

  it("a resync write read before a delivery arrived is dropped, even once the delivery's write is done", async () => {
    const { store, writer, clock } = setup();
    const listedAt = clock.now();
    clock.advance(50);
    writer.submit('pr-1', upsert('webhook-newer'));
    store.pending('pr-1').settle({});
    await writer.idle();
    assert.equal(await writer.write('pr-1', { op: 'upsert', spec: spec('listing-older') }, listedAt), 'superseded');
    assert.equal(await writer.write('pr-1', { op: 'delete' }, listedAt), 'superseded');
    assert.deepEqual(
      store.calls.map((c) => c.sha ?? c.op),
      ['webhook-newer'],
      'the older listing wrote nothing',
    );
    // Another environment, or a listing read after the delivery, is written.
    const later = writer.write('pr-1', { op: 'upsert', spec: spec('listing-newer') }, clock.now());
    store.pending('pr-1').settle({});
    assert.equal(await later, 'upserted');
  });

  it("a resync write replaces an older delivery's write waiting for its retry; the stale one is never made", async () => {
    const { store, writer, clock, writes } = setup();
    writer.submit('pr-1', upsert('webhook-stale'));
    store.pending('pr-1').settle({ error: new TransientError('down', 0, 'ECONNREFUSED') });
    await tick();
    clock.advance(10);
    const done = writer.write('pr-1', { op: 'upsert', spec: spec('listing') }, clock.now());
    store.pending('pr-1').settle({});
    assert.equal(await done, 'upserted');
    clock.advance(60_000);
    await tick();
    assert.deepEqual(
      store.calls.map((c) => c.sha),
      ['webhook-stale', 'listing'],
      "no retry of the stale write after the listing's",
    );
    assert.deepEqual(
      writes.map((w) => [w.source, w.result]),
      [['resync', 'upserted']],
    );
  });

  it('a resync write waiting behind a newer delivery resolves as superseded; a refusal or a first transient failure rejects', async () => {
    const { store, writer, clock } = setup();
    writer.submit('pr-1', upsert('a1'));
    const queued = writer.write('pr-1', { op: 'upsert', spec: spec('r1') }, clock.now());
    writer.submit('pr-1', upsert('a2'));
    assert.equal(await queued, 'superseded');
    store.pending('pr-1').settle({});
    await tick();
    store.pending('pr-1').settle({});
    await writer.idle();
    assert.deepEqual(
      store.calls.map((c) => c.sha),
      ['a1', 'a2'],
    );

    const refused = writer.write('pr-2', { op: 'upsert', spec: spec('r2') }, clock.now());
    store.pending('pr-2').settle({ error: new InvalidError('spec.ttl: Invalid value', 422, 'Invalid') });
    await assert.rejects(refused, InvalidError);
    const flaky = writer.write('pr-3', { op: 'upsert', spec: spec('r3') }, clock.now());
    store.pending('pr-3').settle({ error: new TransientError('down', 0, 'ECONNREFUSED') });
    await assert.rejects(flaky, TransientError);
    clock.advance(100);
    store.pending('pr-3').settle({});
    await writer.idle();
    assert.deepEqual(store.calls.map((c) => c.sha).slice(-2), ['r3', 'r3'], 'the writer retried it all the same');
  });

  it('forgets observations older than its memory', async () => {
    const store = new ScriptedStore();
    const clock = new FakeClock(1_000_000);
    const writer = new EnvironmentWriter({ store, clock, observationMemoryMs: 1000 });
    const listedAt = clock.now();
    writer.submit('pr-1', upsert('a1'));
    store.pending('pr-1').settle({});
    await writer.idle();
    clock.advance(5000);
    writer.submit('pr-2', upsert('b1')); // any submit sweeps what is older than the memory
    store.pending('pr-2').settle({});
    await writer.idle();
    const done = writer.write('pr-1', { op: 'upsert', spec: spec('r1') }, listedAt);
    store.pending('pr-1').settle({});
    assert.equal(await done, 'upserted', 'nothing newer remembered for pr-1 any more');
  });

  it('a write the store finds stale (a newer update recorded) is an outcome: observed, not retried, not a failure', async () => {
    const { store, writer, writes } = setup();
    writer.submit('pr-1', { op: 'delete', updatedAt: '2024-01-01T00:00:00Z' });
    assert.equal(store.pending('pr-1').updatedAt, '2024-01-01T00:00:00Z', 'the delete carries its update to the store');
    store.pending('pr-1').settle({ result: 'stale' });
    await writer.idle();
    const resync = writer.write('pr-2', { op: 'upsert', spec: spec('r1') }, 0);
    store.pending('pr-2').settle({ result: 'stale' });
    assert.equal(await resync, 'stale');
    await writer.idle();
    assert.deepEqual(
      writes.map((w) => [w.environment, w.op, w.result, w.attempts]),
      [
        ['pr-1', 'delete', 'stale', 1],
        ['pr-2', 'upsert', 'stale', 1],
      ],
    );
    assert.equal(store.calls.length, 2);
    assert.equal(writer.failures, 0);
  });

  it('a throwing observer does not stop the queue', async () => {
    const store = new ScriptedStore();
    const writer = new EnvironmentWriter({
      store,
      observe: () => {
        throw new Error('metrics broke');
      },
    });
    writer.submit('pr-1', upsert('a1'));
    writer.submit('pr-1', upsert('a2'));
    store.pending('pr-1').settle({});
    await tick();
    store.pending('pr-1').settle({});
    await writer.idle();
    assert.equal(store.calls.length, 2);
  });
});
