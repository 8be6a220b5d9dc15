// The PreviewEnvironment controller's wiring beside the Algorithm and Database controllers, as
// one operator process registers them (cli-run-controllers.ts): which namespace watches it opens.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { FakePreviewFiles } from '../../test/support/fake-preview-environment.js';
import { RecordingReporter } from '../../test/support/recording-reporter.js';
import { KubeClient, Manager, silentLogger, type KindRef } from '../kube/index.js';
import { registerAlgorithmController } from './algorithm-controller.js';
import { registerDatabaseController } from './database-controller.js';
import { registerPreviewEnvironmentController } from './preview-environment.js';

/** The distinct namespace informers the controllers `register` asks a manager for, by their options. */
function namespaceWatches(register: (manager: Manager) => void): string[] {
  const access = { getCurrentCluster: () => ({ server: 'https://127.0.0.1:1' }), applyToHTTPSOptions: async () => {} };
  const manager = new Manager({ client: new KubeClient(access), leaderElection: false, logger: silentLogger });
  const watches = new Set<string>();
  const informer = manager.informer.bind(manager);
  manager.informer = ((kind: KindRef, options = {}) => {
    if (kind.apiVersion === 'v1' && kind.kind === 'Namespace') watches.add(JSON.stringify(options));
    return informer(kind, options);
  }) as Manager['informer'];
  register(manager);
  return [...watches];
}

const previewEnvironments = (manager: Manager) =>
  registerPreviewEnvironmentController(manager, {
    reporter: new RecordingReporter(),
    repositories: new FakePreviewFiles(),
    domain: 'preview.test',
  });

describe('the namespace watches of one process', () => {
  it('one, when the Algorithm and Database controllers watch every namespace: the PreviewEnvironment controller shares it', () => {
    const watches = namespaceWatches((manager) => {
      registerAlgorithmController(manager, {});
      registerDatabaseController(manager, {});
      previewEnvironments(manager);
    });
    assert.deepEqual(watches, ['{}']);
  });

  it('only the labelled ones for the PreviewEnvironment controller alone, or beside controllers watching one namespace', () => {
    assert.deepEqual(namespaceWatches(previewEnvironments), ['{"labelSelector":"preview.alien6.io/environment"}']);
    const beside = namespaceWatches((manager) => {
      registerAlgorithmController(manager, { namespace: 'team-a' });
      previewEnvironments(manager);
    });
    assert.deepEqual(beside, ['{"fieldSelector":"metadata.name=team-a"}', '{"labelSelector":"preview.alien6.io/environment"}']);
  });
});
