// A cluster's `proxy-url`: HTTPS to the API server through an HTTP proxy's CONNECT tunnel,
// the way client-go reaches a cluster behind a bastion. The TLS session (and its verification
// of the API server) runs inside the tunnel, so the proxy sees only encrypted bytes. Only
// http:// proxies: socks5 and https:// proxies would need more than node's standard library.
import http from 'node:http';
import https from 'node:https';
import net from 'node:net';
import tls from 'node:tls';
import type { Duplex } from 'node:stream';

/** How long the proxy may take to open a tunnel before the request fails. */
const connectTimeoutMs = 30_000;

/**
 * The proxy URL if the operator can use it, else the reason it cannot (for a message that
 * names the cluster).
 */
export function parseProxyUrl(value: string): { url: URL } | { problem: string } {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return { problem: `proxy-url "${value}" is not a URL` };
  }
  if (url.protocol !== 'http:') {
    return { problem: `proxy-url "${redact(url)}": only http:// proxies (HTTP CONNECT) are supported, not ${url.protocol.replace(/:$/, '')}://` };
  }
  if (!url.hostname) return { problem: `proxy-url "${value}" has no host` };
  return { url };
}

/** The proxy URL without its password, for messages. */
function redact(url: URL): string {
  const copy = new URL(url.href);
  if (copy.password) copy.password = '***';
  return copy.href;
}

/**
 * An https.Agent whose connections are CONNECT tunnels through `proxy`. Keep-alive and
 * connection pooling work as with any agent: one tunnel per pooled connection.
 */
export class ProxyTunnelAgent extends https.Agent {
  private readonly proxyAuthorization: string | undefined;

  constructor(private readonly proxy: URL, options: https.AgentOptions) {
    super(options);
    this.proxyAuthorization = proxy.username
      ? `Basic ${Buffer.from(`${decodeURIComponent(proxy.username)}:${decodeURIComponent(proxy.password)}`).toString('base64')}`
      : undefined;
  }

  override createConnection(options: https.RequestOptions, callback?: (err: Error | null, stream: Duplex) => void): Duplex | null | undefined {
    const host = options.host ?? options.hostname ?? 'localhost';
    const port = Number(options.port ?? 443);
    const target = `${net.isIPv6(host) ? `[${host}]` : host}:${port}`;
    const headers: http.OutgoingHttpHeaders = { host: target };
    if (this.proxyAuthorization) headers['proxy-authorization'] = this.proxyAuthorization;
    const connect = http.request({
      host: this.proxy.hostname.replace(/^\[|\]$/g, ''), port: Number(this.proxy.port || 80),
      method: 'CONNECT', path: target, headers, agent: false, timeout: connectTimeoutMs,
    });
    let settled = false;
    const fail = (err: Error) => {
      if (settled) return;
      settled = true;
      connect.destroy();
      callback?.(err, undefined as unknown as Duplex);
    };
    connect.once('timeout', () => fail(Object.assign(new Error(`proxy ${redact(this.proxy)} opened no tunnel to ${target} within ${connectTimeoutMs} ms`), { code: 'ETIMEDOUT' })));
    connect.once('error', (err) => fail(err));
    connect.once('connect', (res, socket) => {
      if (res.statusCode !== 200) {
        socket.destroy();
        const refusal = new Error(`proxy ${redact(this.proxy)} refused the tunnel to ${target}: ${res.statusCode} ${res.statusMessage ?? ''}`.trim());
        // A 5xx is the proxy failing to reach the server (worth a retry); a 4xx is its policy or our credentials.
        fail((res.statusCode ?? 0) >= 500 ? Object.assign(refusal, { code: 'ECONNREFUSED' }) : refusal);
        return;
      }
      settled = true;
      socket.setTimeout(0);
      // The agent's TLS options (CA, client certificate, servername, rejectUnauthorized) apply inside the tunnel.
      const secure = tls.connect({ ...(options as tls.ConnectionOptions), socket });
      callback?.(null, secure);
    });
    connect.end();
    return undefined;
  }
}
