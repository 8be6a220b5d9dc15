// What the GitHub-side tests run against: the PreviewEnvironment CRD installed, an operator
// identity of their own (the audit log's writes by it are exactly the code's), and an informer
// over PreviewEnvironments, the resync's view of the cluster.
import { KubeClient } from '../../src/kube/client.js';
import { previewEnvironmentKind } from '../../src/intake/environment-store.js';
import { Informer } from '../../src/kube/informer.js';
import type { KubeObject } from '../../src/kube/kube-object.js';
import { silentLogger } from '../../src/kube/logger.js';
import { installCrds, operatorCrdFiles } from '../fixtures/crds/install-crds.js';
import { newIdentity, type Identity, type TestCluster } from './test-cluster.js';

type OwnedEnvironment = KubeObject & { spec: { repository: { owner: string } } };

export interface EnvironmentWatch<T extends OwnedEnvironment> {
  identity: Identity;
  client: KubeClient;
  informer: Informer<T>;
  /** Stops the informer and deletes (as `admin`) the environments of repositories of `owner`. */
  stop(owner: string, admin: KubeClient): Promise<void>;
}

export async function watchEnvironments<T extends OwnedEnvironment>(
  cluster: TestCluster,
  identityName: string,
): Promise<EnvironmentWatch<T>> {
  await installCrds(
    cluster.kubeConfig,
    operatorCrdFiles.filter((f) => f.endsWith('previewenvironments.preview.alien6.io.yaml')),
  );
  const identity = await newIdentity(cluster, identityName);
  const client = new KubeClient(identity.kubeConfig);
  const informer = new Informer<T>(client, previewEnvironmentKind, { logger: silentLogger });
  informer.start();
  await informer.waitForSync();
  return {
    identity,
    client,
    informer,
    async stop(owner, admin) {
      await informer.stop();
      for (const env of informer.list()) {
        if (env.spec.repository.owner !== owner) continue;
        await admin.delete({ ...previewEnvironmentKind, name: env.metadata.name! }).catch(() => {});
      }
      client.close();
    },
  };
}
