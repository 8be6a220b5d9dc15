// A TCP relay in front of a server, for tests of what a client does with its connections: it
// counts the connections made through it, and its open connections can be frozen — they stay
// open but carry nothing more, a connection dead without a FIN or RST, as a partition leaves it.
// New connections pass normally.
import { connect, createServer, type AddressInfo, type Socket } from 'node:net';

export interface TcpRelay {
  /** `https://127.0.0.1:<port>` (the target's scheme). */
  url: string;
  /** Connections accepted so far. */
  readonly connections: number;
  freeze(): void;
  close(): void;
}

export async function tcpRelay(target: string): Promise<TcpRelay> {
  const { hostname, port, protocol } = new URL(target);
  const live = new Set<[Socket, Socket]>();
  const all = new Set<Socket>();
  let connections = 0;
  const server = createServer((downstream) => {
    connections++;
    const upstream = connect(Number(port), hostname.replace(/^\[|\]$/g, ''));
    const pair: [Socket, Socket] = [downstream, upstream];
    live.add(pair);
    for (const s of pair) {
      all.add(s);
      s.on('error', () => {});
      s.on('close', () => all.delete(s));
    }
    downstream.pipe(upstream);
    upstream.pipe(downstream);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `${protocol}//127.0.0.1:${(server.address() as AddressInfo).port}`,
    get connections() {
      return connections;
    },
    freeze() {
      for (const [down, up] of live) {
        down.unpipe(up);
        up.unpipe(down);
        down.pause();
        up.pause();
      }
      live.clear();
    },
    close() {
      for (const s of all) s.destroy();
      server.close();
    },
  };
}
