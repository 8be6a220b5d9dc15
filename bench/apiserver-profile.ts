// The API server's CPU profile (Go's pprof; the test control plane serves /debug/pprof to its
// admin) over a burst's first 30 s, as apiserver-burst.pprof in the results, for `go tool pprof`.
import { readFileSync, writeFileSync } from 'node:fs';
import https from 'node:https';
import path from 'node:path';
import type { Cluster } from '../test/cluster/start-cluster.js';

export function recordApiServerProfile(cluster: Cluster, outDir: string, log: (line: string) => void, seconds = 30): Promise<void> {
  const ca = readFileSync(cluster.kubeConfig.getCurrentCluster()!.caFile!);
  const headers = { authorization: `Bearer ${cluster.token}` };
  const url = `${cluster.server}/debug/pprof/profile?seconds=${seconds}`;
  return new Promise<void>((resolve, reject) => {
    const req = https.get(url, { headers, ca, timeout: (seconds + 30) * 1000 }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c)).on('error', reject);
      res.on('end', () => {
        if (res.statusCode !== 200) return reject(new Error(`/debug/pprof/profile answered ${res.statusCode}`));
        writeFileSync(path.join(outDir, 'apiserver-burst.pprof'), Buffer.concat(chunks));
        resolve();
      });
    });
    req.on('timeout', () => req.destroy(new Error('no CPU profile in time'))).on('error', reject);
  }).catch((err: Error) => log(`the API server's CPU profile: ${err.message}`));
}
