// A TCP gate in front of the test API server, for tests of what a client does while the API
// server is slow or unreachable, without disturbing the control plane other test files share.
// `open` forwards bytes both ways; `hold` keeps connections open but their bytes waiting (a
// request sent meanwhile is in flight, unanswered, until the gate opens); `refuse` resets every
// connection, new and established (the client sees ECONNRESET, as when the API server restarts).
// It works on bytes, so TLS passes through untouched.
import net from 'node:net';
import { KubeConfig } from '@kubernetes/client-node';

export type GateMode = 'open' | 'hold' | 'refuse';

interface Link {
  client: net.Socket;
  upstream: net.Socket;
  held: Buffer[];
}

export class ApiServerGate {
  /** Connections reset while refusing (each one a failed attempt of the client). */
  refused = 0;
  private readonly links = new Set<Link>();

  private constructor(
    private readonly server: net.Server,
    private readonly target: URL,
    private current: GateMode,
  ) {
    server.on('connection', (socket) => this.accept(socket));
  }

  /** A gate on 127.0.0.1 (any free port) forwarding to `apiServer` (e.g. `https://127.0.0.1:6443`). */
  static async start(apiServer: string, mode: GateMode = 'open'): Promise<ApiServerGate> {
    const server = net.createServer();
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(0, '127.0.0.1', () => resolve());
    });
    return new ApiServerGate(server, new URL(apiServer), mode);
  }

  get mode(): GateMode {
    return this.current;
  }

  /** The API server's URL through the gate (same host, so its certificate still matches). */
  get url(): string {
    const { port } = this.server.address() as net.AddressInfo;
    return `${this.target.protocol}//${this.target.hostname}:${port}`;
  }

  set(mode: GateMode): void {
    this.current = mode;
    for (const link of this.links) {
      if (mode === 'open') {
        for (const chunk of link.held) link.upstream.write(chunk);
        link.held = [];
      } else if (mode === 'refuse') {
        this.cut(link, true);
      }
    }
  }

  /** `kubeConfig`'s credentials, with its current cluster reached through the gate. */
  kubeConfigFor(kubeConfig: KubeConfig): KubeConfig {
    const current = kubeConfig.getCurrentCluster();
    const gated = new KubeConfig();
    gated.loadFromOptions({
      clusters: kubeConfig.clusters.map((c) => (c.name === current?.name ? { ...c, server: this.url } : c)),
      users: kubeConfig.users,
      contexts: kubeConfig.contexts,
      currentContext: kubeConfig.currentContext,
    });
    return gated;
  }

  async close(): Promise<void> {
    for (const link of this.links) this.cut(link, false);
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private accept(client: net.Socket): void {
    client.on('error', () => {});
    if (this.current === 'refuse') {
      this.refused += 1;
      client.resetAndDestroy();
      return;
    }
    const upstream = net.connect(Number(this.target.port), this.target.hostname);
    upstream.on('error', () => {});
    const link: Link = { client, upstream, held: [] };
    this.links.add(link);
    client.on('data', (chunk: Buffer) => {
      if (this.current === 'open') upstream.write(chunk);
      else if (this.current === 'hold') link.held.push(chunk);
      else this.cut(link, true);
    });
    upstream.on('data', (chunk: Buffer) => client.write(chunk));
    client.on('close', () => this.cut(link, false));
    upstream.on('close', () => this.cut(link, false));
  }

  private cut(link: Link, refused: boolean): void {
    if (!this.links.delete(link)) return;
    if (refused) this.refused += 1;
    link.client.resetAndDestroy();
    link.upstream.destroy();
  }
}
