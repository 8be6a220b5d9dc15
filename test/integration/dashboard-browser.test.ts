// The dashboard end to end, in headless Chromium (Debian's, driven by playwright-core), against
// the local control plane: the PreviewEnvironment controller (with the Algorithm and Database
// controllers of the environment's namespace) builds real environments, and the dashboard the
// operator starts (`startDashboard`, from the operator's informer) shows them. One page load,
// then everything arrives live: a new environment, its turn to Ready, a failure and its reason.
// A branch name written to attack the page is shown as text.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Page } from 'playwright-core';
import { KubeClient, Manager, silentLogger } from '../../src/kube/index.js';
import { startDashboard, type RunningDashboard } from '../../src/server/dashboard.js';
import { launchChromium, type Browser } from '../support/chromium.js';
import type { GitRepository } from '../support/git-repository.js';
import {
  applyEnvironment,
  environmentName,
  getEnvironment,
  previewRepository,
  previewYaml,
  startPreviewOperator,
  startWorkloadControllers,
  type PreviewOperator,
} from './preview-operator-harness.js';

const attack = `<img src=x onerror="window.__xss=1">"'><script>window.__xss=2</script>`;

let operator: PreviewOperator;
let repository: GitRepository;
let manager: Manager;
let client: KubeClient;
let dashboard: RunningDashboard;
let browser: Browser;
let page: Page;
const stopWorkloads: Array<() => Promise<void>> = [];

before(async () => {
  operator = await startPreviewOperator();
  repository = await previewRepository({ '.preview/preview.yaml': previewYaml() });
  // The dashboard as `preview-operator run` starts it: from its manager's PreviewEnvironment
  // informer, the operator's environments only (its selector; the cluster is shared).
  client = new KubeClient(operator.identity.kubeConfig);
  manager = new Manager({ client, leaderElection: false, logger: silentLogger });
  dashboard = await startDashboard({
    manager,
    host: '127.0.0.1',
    port: 0,
    githubApiUrl: 'https://api.github.com',
    environmentSelector: `${operator.selector.key}=${operator.selector.value}`,
  });
  manager.start();
  await manager.waitForCacheSync();
  browser = await launchChromium();
  page = await browser.context.newPage();
  await page.goto(dashboard.url);
  // Set once: were the page reloaded, it would be gone.
  await page.evaluate('window.__loadedOnce = true');
});

after(async () => {
  await browser?.close();
  await dashboard?.close();
  await manager?.stop();
  client?.close();
  for (const stop of stopWorkloads) await stop();
  await operator?.stop();
  await repository?.cleanup();
});

const row = (name: string) => `#environments tr[data-name="${name}"]`;
const stillTheSamePage = () => page.evaluate('window.__loadedOnce === true');
/** What an injected script would have set. */
const injected = () => page.evaluate('window.__xss');

describe('the dashboard in a browser', () => {
  it('starts empty, then an environment appears and turns Ready live, with the right links', async () => {
    assert.equal(await page.isVisible('#none'), true, 'no environment yet');
    assert.match((await page.textContent('#live'))!, /live/);

    const headSha = await repository.openPullRequest(1, { headBranch: 'feature-1', files: {} });
    const name = await applyEnvironment(operator, { repository, pullRequest: 1, headSha });
    assert.equal(name, environmentName(repository, 1));
    stopWorkloads.push(await startWorkloadControllers(operator, name));
    await page.waitForSelector(row(name), { timeout: 30_000 });
    await page.waitForSelector(`${row(name)} .phase-ready`, { timeout: 90_000 });
    assert.equal(await stillTheSamePage(), true, 'Ready arrived without a reload');

    const env = (await getEnvironment(operator, name))!;
    const hrefs = await page.$$eval(`${row(name)} a`, (links) => links.map((a) => [a.closest('td')!.className, a.getAttribute('href')]));
    assert.deepEqual(Object.fromEntries(hrefs), {
      name: `/environments/${name}`,
      repository: `https://github.com/${repository.owner}/${repository.repo}`,
      pr: `https://github.com/${repository.owner}/${repository.repo}/pull/1`,
      author: 'https://github.com/octocat',
      url: env.status!.url,
    });
    assert.equal(await page.textContent(`${row(name)} td.sha`), env.status!.deployedSha!.slice(0, 12));
    assert.match((await page.textContent(`${row(name)} td.resources`))!, /^(\d+)\/\1 ready$/);
    assert.equal(await page.textContent('#count'), '1');
  });

  it('an environment whose configuration is invalid shows its reason, live', async () => {
    const headSha = await repository.openPullRequest(2, {
      headBranch: 'feature-2',
      files: { '.preview/preview.yaml': 'version: 1\nalgorithms:\n  - name: api\n    image: "has space"\n    replicas: 1\n' },
    });
    const name = await applyEnvironment(operator, { repository, pullRequest: 2, headSha });
    await page.waitForSelector(`${row(name)} .phase-failed`, { timeout: 60_000 });
    assert.match((await page.textContent(`${row(name)} td.error strong`))!, /^ConfigInvalid$/);
    assert.match((await page.textContent(`${row(name)} td.error`))!, /\/algorithms\/0\/image/);
    assert.equal(await stillTheSamePage(), true);
  });

  it("a filter by phase, and an environment's page with its conditions, resources and Events", async () => {
    await page.selectOption('select[name=phase]', 'Failed');
    await page.waitForURL(/phase=Failed/);
    assert.deepEqual(await page.$$eval('#environments tbody tr', (rows) => rows.map((r) => r.getAttribute('data-name'))), [
      environmentName(repository, 2),
    ]);

    const name = environmentName(repository, 1);
    await page.goto(`${dashboard.url}/environments/${name}`);
    assert.match((await page.textContent('#detail h1'))!, /Ready/);
    const text = (await page.textContent('#detail'))!;
    for (const expected of ['Conditions', 'ConfigValid', 'Algorithm', 'Database', 'Recent events'])
      assert.ok(text.includes(expected), expected);
    // Events of the environment itself (in `default`) and of its namespace's objects: a failure is one (a
    // deploy that went well is in the status and the comment, not in Events).
    const failed = environmentName(repository, 2);
    await page.goto(`${dashboard.url}/environments/${failed}`);
    await page.waitForSelector('#detail section.events tbody tr', { timeout: 15_000 });
    const objects = await page.$$eval('#detail section.events tbody tr td:nth-child(4)', (cells) => cells.map((c) => c.textContent));
    assert.ok(objects.includes(`PreviewEnvironment/${failed}`), objects.join(', '));
  });

  it('text from a pull request is shown as text, never run', async () => {
    await page.goto(dashboard.url);
    await page.evaluate('window.__loadedOnce = true');
    const name = `pr-3-${repository.repo}`;
    const headSha = await repository.openPullRequest(3, { headBranch: 'feature-3', files: {} });
    await operator.admin.apply({
      apiVersion: 'preview.alien6.io/v1alpha1',
      kind: 'PreviewEnvironment',
      metadata: { name, labels: { [operator.selector.key]: operator.selector.value } },
      spec: {
        repository: { owner: repository.owner, name: repository.repo, cloneUrl: repository.cloneUrl },
        pullRequest: { number: 3, headSha, headRef: attack, baseRef: repository.defaultBranch, author: 'octocat', labels: [attack] },
      },
    });
    await page.waitForSelector(row(name), { timeout: 30_000 });
    assert.equal(await page.textContent(`${row(name)} .ref`), attack, 'the branch name, as it is');
    assert.equal(await page.$$eval('main img, main script', (found) => found.length), 0, "no element of the text's own");
    assert.equal(await injected(), undefined, 'nothing ran');
    await page.goto(`${dashboard.url}/environments/${name}`);
    assert.equal(await page.$$eval('main img, main script', (found) => found.length), 0);
    assert.equal(await injected(), undefined);
  });
});
