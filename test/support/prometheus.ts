import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { waitFor } from './wait.js';

export interface PrometheusServer {
  /** Base URL of the HTTP API, e.g. http://127.0.0.1:9091 (query at /api/v1/query). */
  url: string;
  /** Stops the server (the URL then refuses connections). Safe to call twice. */
  stop(): Promise<void>;
}

/**
 * Starts Debian's `prometheus` on loopback, scraping the given targets every
 * `scrapeInterval`. Real PromQL, real HTTP API: what the rollout analysis talks to.
 */
export async function startPrometheus(options: { targets: string[]; scrapeInterval?: string }): Promise<PrometheusServer> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'prometheus-'));
  const port = await freePort();
  const interval = options.scrapeInterval ?? '1s';
  writeFileSync(
    path.join(dir, 'prometheus.yml'),
    `global:
  scrape_interval: ${interval}
  evaluation_interval: ${interval}
scrape_configs:
  - job_name: test
    scrape_interval: ${interval}
    static_configs:
      - targets: [${options.targets.map((t) => JSON.stringify(t)).join(', ')}]
`,
  );
  const child: ChildProcess = spawn(
    'prometheus',
    [
      `--config.file=${path.join(dir, 'prometheus.yml')}`,
      `--storage.tsdb.path=${path.join(dir, 'data')}`,
      `--web.listen-address=127.0.0.1:${port}`,
      '--log.level=warn',
    ],
    { stdio: ['ignore', 'ignore', 'pipe'] },
  );
  let stderr = '';
  child.stderr!.on('data', (d) => (stderr += d));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const url = `http://127.0.0.1:${port}`;
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill('SIGTERM');
      await exited;
    }
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    await waitFor(
      'prometheus ready',
      async () => {
        if (child.exitCode !== null) throw new Error(`prometheus exited: ${stderr}`);
        return (await fetch(`${url}/-/ready`).catch(() => undefined))?.ok;
      },
      { timeoutMs: 30_000 },
    );
  } catch (err) {
    await stop();
    throw err;
  }
  return { url, stop };
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as AddressInfo;
      srv.close(() => resolve(port));
    });
  });
}
