// The preview most tests and the benchmark deploy: one Algorithm and (optionally) one Database,
// the shape most pull requests have.

/** `.preview/preview.yaml` with one algorithm and optionally one database. */
export function previewYaml({
  image = 'registry.example.com/team/api:1.0',
  database = true,
}: { image?: string; database?: boolean } = {}): string {
  return [
    'version: 1',
    'hostPrefix: api',
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
