// .preview/main.ts of an example repository: runs after preview.yaml has been turned into
// constructs, and adds or changes what YAML cannot say. It runs in the operator's sandbox:
// no network, no environment variables, no files outside the checkout.
import { Algorithm, cdk8s, kplus, type PreviewContext, type PreviewEnvironmentChart } from 'preview-operator/constructs';

export default function (chart: PreviewEnvironmentChart, context: PreviewContext): void {
  const api = chart.algorithms.get('ranking-api');
  const db = chart.databases.get('myapp-db');
  if (!api || !db) throw new Error('preview.yaml must declare ranking-api and myapp-db');

  // A background worker on the API's image, not served on the host.
  new Algorithm(chart, 'ranking-worker', {
    name: 'ranking-worker',
    image: api.image,
    replicas: 1,
    env: { ROLE: 'worker', DATABASE_HOST: db.endpoint, DATABASE_SECRET: db.credentialsSecretName },
  });

  // Fixtures the algorithms read, stamped with the commit being previewed.
  new kplus.k8s.KubeConfigMap(chart, 'fixtures', {
    metadata: { name: 'ranking-fixtures' },
    data: { 'commit.txt': context.identity.sha, 'catalog.json': JSON.stringify({ items: 25 }) },
  });

  // Escape hatch for what the constructs do not expose: a smaller canary in previews.
  chart.algorithms.get('recommendation-engine')?.apiObject.addJsonPatch(cdk8s.JsonPatch.replace('/spec/lifecycle/canaryWeight', 10));
}
