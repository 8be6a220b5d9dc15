// One HTTP/2 connection to the API server: every request and watch is a stream on it. A connection
// whose peer vanished would hold every watch open on nothing and fail every new request, so it pings
// the server while streams are open, as client-go does (every 30 s, closed after 15 s unanswered), and
// at once when a request goes unanswered for its timeout. It lets the process exit while no stream is
// open, as an idle keep-alive socket does.
import http2, { type ClientHttp2Session, type ClientHttp2Stream, type OutgoingHttpHeaders } from 'node:http2';
import type { TLSSocket } from 'node:tls';
import { noAnswerError, type ApiAnswer, type ApiCall } from './api-transport.js';
import { TransientError } from './errors.js';

const { NGHTTP2_CANCEL, NGHTTP2_REFUSED_STREAM } = http2.constants;

export interface Http2ConnectionOptions {
  /** Ping the server this often while streams are open (default 30 s). */
  pingIntervalMs?: number;
  /** Close the connection when a ping is not answered within this (default 15 s). */
  pingTimeoutMs?: number;
}

/** The server refused the stream before acting on it (GOAWAY, or its stream limit): safe to send again. */
export class RefusedStreamError extends TransientError {}

/** Streams one connection carries before it is retired for a new one, well before its ids run out (2^30 client streams). */
const maxStreamsPerConnection = 1 << 29;

export class Http2Connection {
  private readonly session: ClientHttp2Session;
  private openStreams = 0;
  private streamsSent = 0;
  private usable = true;
  private readonly pinger: ReturnType<typeof setInterval>;
  private pinging = false;
  private readonly pingTimeoutMs: number;

  constructor(origin: string, socket: TLSSocket, options: Http2ConnectionOptions = {}) {
    this.session = http2.connect(origin, {
      createConnection: () => socket,
      // Windows as client-go's: a large list is not throttled by window updates; every stream is read at once.
      settings: { enablePush: false, initialWindowSize: 4 << 20 },
      maxSessionMemory: 64,
      // As many header fields as node's HTTP/1.1 parser takes (HTTP/2's default is 128).
      maxHeaderListPairs: 2000,
    });
    this.session.once('connect', () => this.session.setLocalWindowSize(64 << 20));
    // A connection that failed or was told GOAWAY takes no new streams; those open run to their end.
    this.session.on('error', () => (this.usable = false));
    this.session.once('goaway', () => (this.usable = false));
    this.session.once('close', () => clearInterval(this.pinger));
    this.session.unref();
    this.pingTimeoutMs = options.pingTimeoutMs ?? 15_000;
    this.pinger = setInterval(() => this.openStreams > 0 && this.ping(), options.pingIntervalMs ?? 30_000).unref();
  }

  /** False once the server said GOAWAY, the connection failed or it was retired: new calls need a new connection. */
  get isUsable(): boolean {
    return this.usable && !this.session.closed && !this.session.destroyed;
  }

  /**
   * Room for another stream under the server's SETTINGS_MAX_CONCURRENT_STREAMS. Watches hold their
   * streams for minutes: on a full connection a request would wait behind them, so it goes to another.
   */
  get hasRoom(): boolean {
    return this.openStreams < (this.session.remoteSettings?.maxConcurrentStreams ?? 100);
  }

  /** Resolves when the answer's headers arrive. A refused stream rejects with `RefusedStreamError`. */
  send(call: ApiCall): Promise<ApiAnswer> {
    const headers: OutgoingHttpHeaders = { ...call.headers, ':method': call.method, ':path': call.url.pathname + call.url.search };
    const stream = this.session.request(headers, { endStream: call.body === undefined, signal: call.signal });
    this.track(stream);
    if (++this.streamsSent >= maxStreamsPerConnection) this.retire();
    return new Promise((resolve, reject) => {
      if (call.timeoutMs > 0) {
        stream.setTimeout(call.timeoutMs, () => {
          stream.close(NGHTTP2_CANCEL); // a cancel, not an error, for the server
          stream.destroy(noAnswerError(call));
          this.ping();
        });
      }
      let answered = false;
      stream.once('response', (answer) => {
        answered = true;
        const length = answer['content-length'];
        resolve({
          status: Number(answer[':status']),
          contentType: answer['content-type'],
          contentLength: length === undefined ? undefined : Number(length),
          body: stream,
          untimed: () => stream.setTimeout(0),
          close: () => stream.close(NGHTTP2_CANCEL),
        });
      });
      // These settle a call still waiting for its headers (an error built only then: it costs a stack
      // trace); once answered, the body's reader sees them.
      const refused = () => new RefusedStreamError(`${call.what}: stream refused by the server`, 0, 'RefusedStream');
      stream.once('error', (err: Error & { code?: string }) => {
        // Node fails the stream, not the session, when stream ids run out: no new stream can succeed here.
        if (err.code === 'ERR_HTTP2_OUT_OF_STREAMS') this.retire();
        if (!answered) reject(stream.rstCode === NGHTTP2_REFUSED_STREAM ? refused() : err);
      });
      stream.once('close', () => {
        if (answered) return;
        if (stream.rstCode === NGHTTP2_REFUSED_STREAM) reject(refused());
        else reject(new TransientError(`${call.what}: stream closed before an answer (code ${stream.rstCode})`, 0, 'StreamClosed'));
      });
      if (call.body !== undefined) stream.end(call.body);
    });
  }

  /** Ends every stream and the connection. */
  close(): void {
    this.usable = false;
    this.session.destroy();
  }

  /** Takes no new streams; the connection closes once those open have ended. */
  private retire(): void {
    this.usable = false;
    if (!this.session.closed) this.session.close();
  }

  /** Keeps the process alive while a stream is open, like a socket in use. */
  private track(stream: ClientHttp2Stream): void {
    if (this.openStreams++ === 0) this.session.ref();
    stream.once('close', () => {
      if (--this.openStreams === 0) this.session.unref();
    });
  }

  /** Closes the connection, failing its streams, unless the server answers a ping in time. */
  private ping(): void {
    // Node cancels a ping on a connection closing (retired, or told GOAWAY): its remaining watches have
    // the informer's watchdog and TCP keep-alive, as over HTTP/1.1.
    if (this.pinging || !this.isUsable) return;
    this.pinging = true;
    const timeoutMs = this.pingTimeoutMs;
    const unanswered = setTimeout(
      () => this.session.destroy(new TransientError(`API server did not answer a ping within ${timeoutMs} ms`, 0, 'PingTimeout')),
      timeoutMs,
    ).unref();
    const sent = this.session.ping((err) => {
      this.pinging = false;
      clearTimeout(unanswered);
      if (err && this.isUsable) this.session.destroy(err);
    });
    if (!sent) {
      this.pinging = false;
      clearTimeout(unanswered);
    }
  }
}
