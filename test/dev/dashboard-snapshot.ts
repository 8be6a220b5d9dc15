// The dashboard's picture and its load time, reproducibly: a local control plane, PreviewEnvironments
// in assorted states written directly (no controller runs: their status is written the way the
// controller writes it, through the status subresource), the dashboard the operator serves, and
// headless Chromium. Prints the time to the first render of the list; saves a screenshot.
//
//   node --import tsx test/dev/dashboard-snapshot.ts [--count=200] [--runs=5] [--screenshot=docs/dashboard.png]
import { parseArgs } from 'node:util';
import { randomBytes } from 'node:crypto';
import { KubeClient, Manager, silentLogger } from '../../src/kube/index.js';
import { startDashboard } from '../../src/server/dashboard.js';
import { installCrds } from '../fixtures/crds/install-crds.js';
import { launchChromium } from '../support/chromium.js';
import { testCluster } from '../support/test-cluster.js';

const { values } = parseArgs({
  options: { count: { type: 'string', default: '8' }, runs: { type: 'string', default: '5' }, screenshot: { type: 'string' } },
});
const count = Number(values.count);
const runs = Number(values.runs);
const kind = { apiVersion: 'preview.alien6.io/v1alpha1', kind: 'PreviewEnvironment' };
const selector = { key: 'preview.alien6.io/dashboard-snapshot', value: randomBytes(3).toString('hex') };
const repositories = ['shop', 'search', 'recommendations', 'billing'];
const people = ['mona', 'octocat', 'hubot', 'lena-k'];

/** What environment `i` shows: most are Ready, the others one of each other state. */
function statusOf(i: number, name: string, sha: string, host: string): Record<string, unknown> {
  const at = (hours: number) => new Date(Date.now() + hours * 3_600_000).toISOString().replace(/\.\d+Z$/, 'Z');
  const condition = (type: string, status: string, reason: string, message: string) => ({
    type,
    status,
    reason,
    message,
    lastTransitionTime: at(-1),
  });
  const resources = (ready: boolean) => [
    { apiVersion: 'ai.alien6.io/v1', kind: 'Algorithm', name: 'api', ready: true },
    {
      apiVersion: 'mycompany.com/v1',
      kind: 'Database',
      name: 'db',
      ready,
      ...(ready ? {} : { message: 'StatefulSet db: 0/1 replicas ready' }),
    },
    { apiVersion: 'cert-manager.io/v1', kind: 'Certificate', name: 'preview-tls', ready: true },
  ];
  const base = { namespace: name, observedGeneration: 1, lastReconciled: at(0) };
  const valid = condition('ConfigValid', 'True', 'Valid', 'configuration of the head commit, rendered by the construct library');
  switch (i % 8) {
    case 3:
      return {
        ...base,
        phase: 'Deploying',
        conditions: [condition('Ready', 'False', 'WaitingForResources', 'Database db: 0/1 replicas ready'), valid],
        resources: resources(false),
      };
    case 5:
      return {
        ...base,
        phase: 'Failed',
        conditions: [
          condition('Ready', 'False', 'ConfigInvalid', '.preview/preview.yaml: /algorithms/0/image: must be an image reference'),
          condition('ConfigValid', 'False', 'ConfigInvalid', '/algorithms/0/image'),
        ],
      };
    case 6:
      return {
        ...base,
        phase: 'Queued',
        conditions: [condition('Ready', 'False', 'Queued', 'acme/search runs 3 of 3 environments allowed; queued')],
      };
    default:
      return {
        ...base,
        phase: 'Ready',
        url: `https://${host}/`,
        deployedSha: sha,
        expiresAt: at(71 - i),
        lastDeployedAt: at(i - 1),
        conditions: [
          condition('Ready', 'True', 'Ready', `${sha.slice(0, 12)} serves at https://${host}/`),
          valid,
          condition('Reconciled', 'True', 'Reconciled', 'the last reconcile succeeded'),
        ],
        resources: resources(true),
      };
  }
}

async function createEnvironments(client: KubeClient): Promise<void> {
  for (let i = 0; i < count; i++) {
    const repo = repositories[i % repositories.length]!;
    const number = 100 + i;
    const name = `pr-${number}-${repo}-${selector.value}`;
    const sha = randomBytes(20).toString('hex');
    await client.apply({
      ...kind,
      metadata: { name, labels: { [selector.key]: selector.value } },
      spec: {
        repository: { owner: 'acme', name: repo, cloneUrl: `https://github.com/acme/${repo}.git` },
        pullRequest: {
          number,
          headSha: sha,
          headRef: `feature/${repo}-${number}`,
          baseRef: 'main',
          author: people[i % people.length],
          authorAssociation: 'MEMBER',
        },
      },
    });
    await client.patch(
      { ...kind, name },
      'merge',
      { status: statusOf(i, name, sha, `${repo}-pr-${number}.preview.example.com`) },
      { subresource: 'status' },
    );
  }
}

interface Timing {
  server: number;
  parsed: number;
  fcp: number;
  rows: number;
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

async function main(): Promise<void> {
  const cluster = await testCluster();
  await installCrds(cluster.kubeConfig);
  const client = new KubeClient(cluster.kubeConfig, { fieldManager: 'dashboard-snapshot' });
  await createEnvironments(client);
  const manager = new Manager({ client, leaderElection: false, logger: silentLogger });
  const dashboard = await startDashboard({
    manager,
    host: '127.0.0.1',
    port: 0,
    githubApiUrl: 'https://api.github.com',
    environmentSelector: `${selector.key}=${selector.value}`,
  });
  manager.start();
  await manager.waitForCacheSync();
  const browser = await launchChromium({ viewport: { width: 1840, height: 700 } });
  try {
    const page = await browser.context.newPage();
    const timings: Timing[] = [];
    for (let run = 0; run < runs; run++) {
      await page.goto(`${dashboard.url}/?run=${run}`, { waitUntil: 'load' });
      // Two frames: the first paint has happened and is in the timeline (the page's own code, run in the browser).
      await page.evaluate('new Promise((resolve) => requestAnimationFrame(() => requestAnimationFrame(resolve)))');
      timings.push(
        await page.evaluate<Timing>(`(() => {
        const nav = performance.getEntriesByType('navigation')[0];
        return {
          server: nav.responseEnd - nav.requestStart,
          parsed: nav.domInteractive,
          fcp: performance.getEntriesByName('first-contentful-paint')[0]?.startTime ?? NaN,
          rows: document.querySelectorAll('#environments tbody tr').length,
        };
      })()`),
      );
      if (timings.at(-1)!.rows !== count) throw new Error(`the page shows ${timings.at(-1)!.rows} environments, not ${count}`);
    }
    const bytes = (await (await fetch(dashboard.url)).text()).length;
    console.log(`${count} environments, ${(bytes / 1024).toFixed(0)} KiB of HTML, ${runs} loads (medians):`);
    const ms = (pick: (t: (typeof timings)[number]) => number) => `${median(timings.map(pick)).toFixed(0)} ms`;
    console.log(`  request to last byte ${ms((t) => t.server)}, every row parsed ${ms((t) => t.parsed)},`);
    console.log(`  first contentful paint (the list, rendered) ${ms((t) => t.fcp)} after navigation started`);
    if (values.screenshot) {
      await page.waitForSelector('#live.on');
      await page.screenshot({ path: values.screenshot });
      console.log(`screenshot: ${values.screenshot}`);
    }
  } finally {
    await browser.close();
    await dashboard.close();
    await manager.stop();
    await client
      .list(kind, { labelSelector: `${selector.key}=${selector.value}` })
      .then(({ items }) => Promise.all(items.map((item) => client.delete({ ...kind, name: item.metadata.name! }))));
    client.close();
  }
}

await main();
process.exit(0);
