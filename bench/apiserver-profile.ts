// The API server's CPU profile over a window of the burst (Go's pprof: the test control plane
// runs with --profiling), summarised by `go tool pprof`. The burst's slowest stage is the API
// server — it spends about half the machine's CPU — so this says where that time goes.
import { execFile } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import https from 'node:https';
import { promisify } from 'node:util';

export interface ApiServerAccess {
  server: string;
  token: string;
  /** The CA that verifies the API server (the kubeconfig's). */
  caFile: string;
}

/** Named frames whose cumulative share is reported; they overlap (a storage write includes its field management). */
const areas: Array<[string, RegExp]> = [
  ['writes in storage (read, patch, field management, etcd)', /storage\/etcd3\.\(\*store\)\.GuaranteedUpdate$/],
  ['creates in storage', /storage\/etcd3\.\(\*store\)\.Create$/],
  ['field management (managedFields, server-side apply)', /managedfields\/internal\.\(\*FieldManager\)\.Update$/],
  ['serving watches', /handlers\.\(\*WatchServer\)\.HandleHTTP$/],
  ['etcd round trips', /etcd\/client\/v3\.\(\*Client\)\.unaryClientInterceptor\.func1$/],
  ['priority and fairness', /filters\.\(\*priorityAndFairnessHandler\)\.Handle$/],
  ['garbage collection (background)', /^runtime\.gcBgMarkWorker$/],
  ['allocation (GC assists included)', /^runtime\.mallocgc$/],
];

/** Records `seconds` of the API server's CPU profile into `file` (resolves when it is written). */
export function recordApiServerProfile(access: ApiServerAccess, seconds: number, file: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const req = https.get(`${access.server}/debug/pprof/profile?seconds=${seconds}`, {
      headers: { authorization: `Bearer ${access.token}` },
      ca: readFileSync(access.caFile),
      timeout: (seconds + 30) * 1000,
    }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        if (res.statusCode !== 200) reject(new Error(`the API server answered ${res.statusCode} to /debug/pprof/profile: ${Buffer.concat(chunks).toString('utf8').slice(0, 200)}`));
        else {
          writeFileSync(file, Buffer.concat(chunks));
          resolve();
        }
      });
      res.on('error', reject);
    });
    req.on('timeout', () => req.destroy(new Error('no CPU profile from the API server in time')));
    req.on('error', reject);
  });
}

export interface ApiServerProfileSummary {
  /** One line for the results' notes. */
  headline: string;
  /** `go tool pprof -top -cum`, its first lines. */
  top: string;
}

/** Summarises a pprof CPU profile with `go tool pprof` (Go is on PATH: it built the control plane). */
export async function summarizeApiServerProfile(file: string, windowSeconds: number): Promise<ApiServerProfileSummary> {
  const { stdout } = await promisify(execFile)('go', ['tool', 'pprof', '-top', '-cum', '-nodecount=5000', file], { maxBuffer: 64 * 1024 * 1024 });
  return parsePprofTop(stdout, windowSeconds);
}

/** The summary of `go tool pprof -top -cum` output (exported for its test). */
export function parsePprofTop(text: string, windowSeconds: number): ApiServerProfileSummary {
  const lines = text.split('\n');
  const total = /Total samples = ([\d.]+)(ms|s)/.exec(text);
  const sampledSeconds = total ? Number(total[1]) / (total[2] === 'ms' ? 1000 : 1) : Number.NaN;
  const cumShare = new Map<string, number>();
  for (const line of lines) {
    // flat flat% sum% cum cum% name
    const m = /^\s*[\d.]+\w*\s+[\d.]+%\s+[\d.]+%\s+[\d.]+\w*\s+([\d.]+)%\s+(.+)$/.exec(line);
    if (!m) continue;
    const name = m[2]!.replace(/ \(inline\)$/, '');
    for (const [area, pattern] of areas) if (!cumShare.has(area) && pattern.test(name)) cumShare.set(area, Number(m[1]));
  }
  const shares = areas.filter(([area]) => cumShare.has(area)).map(([area]) => `${area} ${cumShare.get(area)!.toFixed(0)} %`);
  const header = lines.findIndex((l) => /^\s*flat\s+flat%/.test(l));
  return {
    headline: `${sampledSeconds.toFixed(1)} CPU s sampled in ${windowSeconds} s (${(sampledSeconds / windowSeconds).toFixed(2)} cores); cumulative shares, overlapping: ${shares.join(', ')}`,
    top: lines.slice(0, header >= 0 ? header + 41 : 50).join('\n'),
  };
}
