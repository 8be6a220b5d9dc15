// HTTP/2 to a TLS API server, as client-go speaks it: one connection carries every request and watch
// (another only when a server's stream limit leaves it no room).
// Over HTTP/1.1 each request in flight holds a connection of its own (a burst opened one TLS
// connection per concurrent request), and node's HTTP/1.1 client spends about twice the CPU per
// request. The TLS handshake offers h2 and http/1.1; a server that picks http/1.1 is spoken to over
// the HTTP/1.1 transport from then on.
import net from 'node:net';
import tls, { type ConnectionOptions, type TLSSocket } from 'node:tls';
import { noAnswerError, type ApiAnswer, type ApiCall, type ApiTransport } from './api-transport.js';
import { TransientError } from './errors.js';
import { Http2Connection, RefusedStreamError, type Http2ConnectionOptions } from './http2-connection.js';

export interface Http2TransportOptions extends Http2ConnectionOptions {
  /** A TCP and TLS handshake that takes longer fails (default 10 s). */
  connectTimeoutMs?: number;
}

/** What `session.request` throws when the connection can take no new stream: open another one. */
const unusableSessionCodes = new Set(['ERR_HTTP2_INVALID_SESSION', 'ERR_HTTP2_GOAWAY_SESSION', 'ERR_HTTP2_OUT_OF_STREAMS']);

export class Http2Transport implements ApiTransport {
  /** Open connections, oldest first: a new one only when none has room for another stream. */
  private connections: Http2Connection[] = [];
  private connecting: Promise<void> | undefined;
  private http1: ApiTransport | undefined;
  private closed = false;

  /**
   * @param server the API server's URL (its origin is used)
   * @param tlsOptions the kubeconfig's CA, client certificate and key, server name, verification
   * @param makeHttp1 the transport for a server that does not offer h2
   */
  constructor(
    private readonly server: URL,
    private readonly tlsOptions: ConnectionOptions,
    private readonly makeHttp1: () => ApiTransport,
    private readonly options: Http2TransportOptions = {},
  ) {}

  async send(call: ApiCall): Promise<ApiAnswer> {
    for (let attempt = 1; ; attempt++) {
      const connection = this.roomy() ?? (await withinCall(this.current(), call));
      if (!connection) return this.http1!.send(call);
      try {
        return await connection.send(call);
      } catch (err) {
        // A stream the server never acted on, or a connection that went away under us: once more
        // (on a new connection if this one takes no more streams; its other streams run to their end).
        const refused = err instanceof RefusedStreamError || unusableSessionCodes.has((err as { code?: string }).code ?? '');
        if (!refused || attempt > 1) throw err;
      }
    }
  }

  close(): void {
    this.closed = true;
    for (const connection of this.connections) connection.close();
    this.connections = [];
    this.http1?.close();
  }

  /** An open connection with room for a stream, if there is one. */
  private roomy(): Http2Connection | undefined {
    if (this.http1 || this.closed) return undefined;
    if (!this.connections.every((c) => c.isUsable)) this.connections = this.connections.filter((c) => c.isUsable);
    return this.connections.find((c) => c.hasRoom);
  }

  /** A connection with room for a stream (a new one if none has), or undefined when the server speaks HTTP/1.1 only. */
  private async current(): Promise<Http2Connection | undefined> {
    for (;;) {
      if (this.http1) return undefined;
      if (this.closed) throw new TransientError('the API client is closed', 0, 'Closed');
      const roomy = this.roomy();
      if (roomy) return roomy;
      // One handshake at a time; everyone waiting looks again once it is done.
      this.connecting ??= this.connect().finally(() => (this.connecting = undefined));
      await this.connecting;
    }
  }

  private async connect(): Promise<void> {
    const socket = await connectTls(this.server, this.tlsOptions, this.options.connectTimeoutMs ?? 10_000);
    if (this.closed) {
      socket.destroy();
      return;
    }
    if (socket.alpnProtocol !== 'h2') {
      socket.destroy();
      this.http1 ??= this.makeHttp1();
      return;
    }
    this.connections.push(new Http2Connection(this.server.origin, socket, this.options));
  }
}

/** The connection, unless the call's signal aborts or its timeout passes first (a handshake that hangs). */
function withinCall<T>(connecting: Promise<T>, call: ApiCall): Promise<T> {
  const { signal, timeoutMs } = call;
  if (!signal && !(timeoutMs > 0)) return connecting;
  return new Promise<T>((resolve, reject) => {
    const timer = timeoutMs > 0 ? setTimeout(() => reject(noAnswerError(call)), timeoutMs) : undefined;
    const aborted = () => reject(new DOMException('This operation was aborted', 'AbortError'));
    if (signal?.aborted) aborted();
    signal?.addEventListener('abort', aborted, { once: true });
    connecting.then(resolve, reject).finally(() => {
      clearTimeout(timer);
      signal?.removeEventListener('abort', aborted);
    });
  });
}

/** A TLS connection offering h2 and http/1.1, verified as the kubeconfig says. */
function connectTls(server: URL, options: ConnectionOptions, timeoutMs: number): Promise<TLSSocket> {
  const host = server.hostname.replace(/^\[|\]$/g, '');
  return new Promise((resolve, reject) => {
    const socket = tls.connect({
      ...options,
      host,
      port: Number(server.port || 443),
      // SNI as https.Agent sends it: the host's name, never an IP address.
      servername: options.servername ?? (net.isIP(host) ? undefined : host),
      ALPNProtocols: ['h2', 'http/1.1'],
    });
    const fail = (err: Error) => {
      clearTimeout(timer);
      socket.destroy();
      reject(err);
    };
    const timer = setTimeout(
      () => fail(new TransientError(`no TLS connection to ${server.host} within ${timeoutMs} ms`, 0, 'ConnectTimeout')),
      timeoutMs,
    );
    socket.once('error', fail);
    socket.once('secureConnect', () => {
      clearTimeout(timer);
      socket.removeListener('error', fail);
      socket.setKeepAlive(true, 30_000);
      resolve(socket);
    });
  });
}
