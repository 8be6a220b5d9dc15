import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/** The traffic one workload track is receiving, as the exporter reports it. */
export interface Traffic {
  /** Requests per second. */
  rps: number;
  /** Fraction of requests answered without a 5xx, 0..1. */
  successRate: number;
}

interface Series {
  labels: Record<string, string>;
  traffic: Traffic;
  total: number;
  errors: number;
  since: number;
}

/**
 * Serves `http_requests_total{namespace, algorithm, track, code}` counters in the
 * Prometheus text format. Tests set the traffic each track sees; counters grow with
 * wall time at that rate, so `rate()` over them gives back the configured success
 * rate. A track with no traffic set exports no series at all (no samples).
 */
export class RequestExporter {
  private readonly series = new Map<string, Series>();
  private server?: Server;

  setTraffic(labels: { namespace: string; algorithm: string; track: string }, traffic: Traffic | undefined): void {
    const key = JSON.stringify(labels);
    if (!traffic) {
      this.series.delete(key);
      return;
    }
    const existing = this.series.get(key);
    if (existing) {
      this.advance(existing);
      existing.traffic = traffic;
    } else {
      this.series.set(key, { labels, traffic, total: 0, errors: 0, since: Date.now() });
    }
  }

  private advance(s: Series): void {
    const now = Date.now();
    const requests = (s.traffic.rps * (now - s.since)) / 1000;
    s.total += requests;
    s.errors += requests * (1 - s.traffic.successRate);
    s.since = now;
  }

  render(): string {
    const lines = ['# HELP http_requests_total Requests served.', '# TYPE http_requests_total counter'];
    for (const s of this.series.values()) {
      this.advance(s);
      const base = Object.entries(s.labels)
        .map(([k, v]) => `${k}="${v}"`)
        .join(',');
      lines.push(`http_requests_total{${base},code="200"} ${(s.total - s.errors).toFixed(3)}`);
      lines.push(`http_requests_total{${base},code="500"} ${s.errors.toFixed(3)}`);
    }
    return `${lines.join('\n')}\n`;
  }

  /** Listens on 127.0.0.1 and returns the `host:port` target for Prometheus. */
  async listen(): Promise<string> {
    this.server = createServer((req, res) => {
      if (req.url !== '/metrics') {
        res.writeHead(404).end();
        return;
      }
      res.writeHead(200, { 'content-type': 'text/plain; version=0.0.4' }).end(this.render());
    });
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    return `127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  async close(): Promise<void> {
    await new Promise((resolve) => this.server?.close(resolve));
  }
}
