// The preview most tests and the benchmark deploy: one Algorithm and (optionally) one Database,
// the shape most pull requests have.
import { previewHostname } from '../../constructs/index.js';
import { repositoryHash } from '../../src/synth/render-preview.js';

const hostPrefix = 'api';

/** `.preview/preview.yaml` with one algorithm and optionally one database. */
export function previewYaml({
  image = 'registry.example.com/team/api:1.0',
  database = true,
}: { image?: string; database?: boolean } = {}): string {
  return [
    'version: 1',
    `hostPrefix: ${hostPrefix}`,
    'resources:',
    '  cpu: "4"',
    '  memory: 8Gi',
    '  storage: 10Gi',
    'algorithms:',
    '  - name: api',
    `    image: ${image}`,
    '    replicas: 1',
    ...(database ? ['databases:', '  - name: db', '    engine: postgresql', '    version: "16"', '    storage: 1Gi'] : []),
    '',
  ].join('\n');
}

/** The host of a pull request of `repository` deployed from `previewYaml()`. */
export function previewYamlHost(repository: { owner: string; name: string }, pullRequest: number, domain: string): string {
  return previewHostname({ hostPrefix, repositoryName: repository.name, repositoryHash: repositoryHash(repository), pullRequest, domain });
}
