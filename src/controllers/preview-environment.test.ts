// The PreviewEnvironment controller's wiring beside the Algorithm and Database controllers, as
// one operator process registers them: which watches the process opens.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { FakePreviewFiles } from '../../test/support/fake-preview-environment.js';
import { RecordingReporter } from '../../test/support/recording-reporter.js';
import { KubeClient, Manager, silentLogger, type KindRef } from '../kube/index.js';
import { registerAlgorithmController } from './algorithm-controller.js';
import { registerDatabaseController } from './database-controller.js';
import { registerPreviewEnvironmentController } from './preview-environment.js';

/** The informers the three controllers ask a manager for, by kind: one entry per distinct watch. */
function watchesOf(register: (manager: Manager) => void): Map<string, Set<string>> {
  const access = { getCurrentCluster: () => ({ server: 'https://127.0.0.1:1' }), applyToHTTPSOptions: async () => {} };
  const manager = new Manager({ client: new KubeClient(access), leaderElection: false, logger: silentLogger });
  const watches = new Map<string, Set<string>>();
  const informer = manager.informer.bind(manager);
  manager.informer = ((kind: KindRef, options = {}) => {
    const key = `${kind.apiVersion}/${kind.kind}`;
    watches.set(key, (watches.get(key) ?? new Set()).add(JSON.stringify(options)));
    return informer(kind, options);
  }) as Manager['informer'];
  register(manager);
  return watches;
}

describe('the controllers of one process', () => {
  it('watch namespaces once: the PreviewEnvironment controller shares the Algorithm and Database controllers’ cache', () => {
    const files = new FakePreviewFiles();
    const watches = watchesOf((manager) => {
      registerAlgorithmController(manager, {});
      registerDatabaseController(manager, {});
      registerPreviewEnvironmentController(manager, { reporter: new RecordingReporter(), repositories: files, domain: 'preview.test' });
    });
    assert.deepEqual([...(watches.get('v1/Namespace') ?? [])], ['{}']);
  });
});
