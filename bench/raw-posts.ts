// A load generator as lean as wrk's: `concurrency` keep-alive HTTP/1.1 connections, each writing
// one pre-serialised request at a time and reading its answer straight off the socket. Node's
// http client spends 0.3–0.5 ms of CPU per request on this machine; on two shared cores that
// client's CPU is queueing the receiver's answers behind it, so scenario 1 would time the bench
// as much as the receiver. GitHub's senders do not run on the operator's cores.
import { connect, type Socket } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';

export interface TimedAnswer {
  status: number;
  /** Request's first byte written (in an open loop: when it was due) → answer's last byte read. */
  ms: number;
  /** Open loop: how long after it was due the request was written (waiting for a connection, or for the client itself); else 0. */
  lateMs: number;
  /** When the answer's last byte was read (performance.now()). */
  endedAt: number;
}

export interface RawPost {
  path: string;
  headers: Record<string, string>;
  body: string;
}

/** The request's bytes, built before the clock starts. */
export function serializePost(host: string, post: RawPost): Buffer {
  const body = Buffer.from(post.body);
  const lines = [`POST ${post.path} HTTP/1.1`, `Host: ${host}`, 'Connection: keep-alive', `Content-Length: ${body.length}`];
  for (const [name, value] of Object.entries(post.headers)) {
    if (name.toLowerCase() !== 'content-length' && name.toLowerCase() !== 'host') lines.push(`${name}: ${value}`);
  }
  return Buffer.concat([Buffer.from(`${lines.join('\r\n')}\r\n\r\n`), body]);
}

/** `count` connections, opened before any clock starts; each sends one request at a time. */
export class RawConnections {
  private constructor(private readonly connections: readonly AnswerReader[]) {}

  static async open(port: number, count: number): Promise<RawConnections> {
    const opened = await Promise.allSettled(Array.from({ length: count }, () => AnswerReader.open(port)));
    const connections = opened.flatMap((o) => (o.status === 'fulfilled' ? [o.value] : []));
    const failed = opened.find((o): o is PromiseRejectedResult => o.status === 'rejected');
    if (failed) {
      for (const connection of connections) connection.close();
      throw failed.reason;
    }
    return new RawConnections(connections);
  }

  /** Sends every request, one per connection at a time; the answers in the requests' order. */
  async sendAll(requests: readonly Buffer[]): Promise<TimedAnswer[]> {
    const answers: TimedAnswer[] = new Array(requests.length);
    let next = 0;
    await Promise.all(this.connections.map(async (connection) => {
      for (let i = next++; i < requests.length; i = next++) answers[i] = await connection.send(requests[i]!);
    }));
    return answers;
  }

  /**
   * Open loop: request i is due `i / perSecond` seconds after the start, whether or not the
   * earlier ones were answered — as GitHub sends deliveries when things happen. Each goes out on
   * an idle connection, or waits for one; its time counts from when it was due, so a receiver
   * that falls behind shows in the figures instead of slowing the sender (no coordinated omission).
   */
  async sendAtRate(requests: readonly Buffer[], perSecond: number): Promise<TimedAnswer[]> {
    if (!(perSecond > 0)) throw new RangeError(`a rate must be above 0 per second, got ${perSecond}`);
    const answers: TimedAnswer[] = new Array(requests.length);
    const idle = [...this.connections];
    const due: number[] = [];
    let next = 0;
    let failed: Error | undefined;
    let settle!: () => void;
    const finished = new Promise<void>((resolve) => { settle = resolve; });
    let answered = 0;
    const start = performance.now();
    const dueAt = (i: number) => start + (1000 * i) / perSecond;
    const dispatch = () => {
      while (due.length > 0 && idle.length > 0) {
        const i = due.shift()!;
        // The longest idle first: every connection keeps being used, so none reaches the receiver's idle timeout.
        const connection = idle.shift()!;
        connection.send(requests[i]!, dueAt(i)).then((answer) => {
          answers[i] = answer;
          idle.push(connection);
        }, (err: Error) => {
          failed ??= err;
        }).finally(() => {
          answered += 1;
          if (answered === requests.length || failed) settle();
          else dispatch();
        });
      }
    };
    while (next < requests.length && !failed) {
      const now = performance.now();
      while (next < requests.length && dueAt(next) <= now) due.push(next++);
      dispatch();
      if (next < requests.length) await sleep(Math.max(0, dueAt(next) - performance.now()));
    }
    if (requests.length > 0) await finished;
    if (failed) throw failed;
    return answers;
  }

  close(): void {
    for (const connection of this.connections) connection.close();
  }
}

/** One connection: one request in flight, its answer parsed by Content-Length (what Node's server sends for a body given whole). */
class AnswerReader {
  private buffered: Buffer = Buffer.alloc(0);
  private waiting?: { started: number; lateMs: number; resolve: (a: TimedAnswer) => void; reject: (e: Error) => void };
  /** Why the connection is gone (the receiver closed it, idle or not), once it is. */
  private closed?: Error;

  private constructor(private readonly socket: Socket) {
    socket.setNoDelay(true);
    socket.on('data', (chunk: Buffer) => this.onData(chunk));
    socket.on('error', (err) => this.fail(err));
    socket.on('close', () => {
      this.closed ??= new Error('the receiver closed the connection (an idle one is closed after its keep-alive timeout)');
      this.fail(this.closed);
    });
  }

  static open(port: number): Promise<AnswerReader> {
    return new Promise((resolve, reject) => {
      const socket = connect({ host: '127.0.0.1', port }, () => {
        socket.off('error', reject);
        resolve(new AnswerReader(socket));
      });
      socket.once('error', reject);
    });
  }

  /** `since`: where the answer's time counts from (default: now, as the request is written). */
  send(request: Buffer, since = performance.now()): Promise<TimedAnswer> {
    // A write to a closed socket neither fails nor is answered: say so instead of waiting forever.
    if (this.closed) return Promise.reject(this.closed);
    return new Promise((resolve, reject) => {
      this.waiting = { started: since, lateMs: performance.now() - since, resolve, reject };
      this.socket.write(request);
    });
  }

  close(): void {
    this.closed ??= new Error('closed by the bench');
    this.fail(this.closed);
    this.socket.destroy();
  }

  private onData(chunk: Buffer): void {
    this.buffered = this.buffered.length === 0 ? chunk : Buffer.concat([this.buffered, chunk]);
    const headEnd = this.buffered.indexOf('\r\n\r\n');
    if (headEnd < 0 || !this.waiting) return;
    const head = this.buffered.subarray(0, headEnd).toString('latin1');
    const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(head)?.[1] ?? NaN);
    const length = /\r\ncontent-length: *(\d+)/i.exec(head)?.[1];
    if (Number.isNaN(status) || length === undefined) {
      this.fail(new Error(`an answer this client cannot read (needs a status line and Content-Length): ${JSON.stringify(head.slice(0, 200))}`));
      return;
    }
    const end = headEnd + 4 + Number(length);
    if (this.buffered.length < end) return;
    const waiting = this.waiting;
    this.waiting = undefined;
    this.buffered = this.buffered.subarray(end);
    const endedAt = performance.now();
    waiting.resolve({ status, ms: endedAt - waiting.started, lateMs: waiting.lateMs, endedAt });
  }

  private fail(err: Error): void {
    const waiting = this.waiting;
    this.waiting = undefined;
    waiting?.reject(err);
  }
}
