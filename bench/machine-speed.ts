// The machine's speed at a moment: a fixed piece of single-threaded CPU work, timed. The same
// burst has cost 129 busy CPU seconds in one run and 235 in another on the same code (a shared
// virtual machine), so a run's figures are compared with others' only beside this. The work is
// what the processes of a run mostly do: encode and decode objects the size of a Kubernetes
// object's JSON.

/** A Deployment-sized object (about 2.8 KB of JSON). */
const sample = {
  apiVersion: 'apps/v1', kind: 'Deployment',
  metadata: { name: 'api', namespace: 'pr-1-service', labels: Object.fromEntries(Array.from({ length: 8 }, (_, i) => [`label-${i}`, `value-${i}`])), annotations: { note: 'x'.repeat(200) } },
  spec: {
    replicas: 2,
    template: {
      spec: {
        containers: Array.from({ length: 3 }, (_, c) => ({
          name: `container-${c}`, image: `registry.example/app:${c}`,
          env: Array.from({ length: 12 }, (_, i) => ({ name: `VARIABLE_${i}`, value: `value-${i}-${c}` })),
          resources: { requests: { cpu: '100m', memory: '128Mi' }, limits: { cpu: '500m', memory: '256Mi' } },
          ports: [{ containerPort: 8080, name: 'http', protocol: 'TCP' }],
        })),
      },
    },
  },
};

/** The fixed work: `roundTrips` JSON round trips of that object on this thread. */
export function fixedCpuWork(roundTrips: number): void {
  let replicas = 0;
  for (let i = 0; i < roundTrips; i++) replicas += (JSON.parse(JSON.stringify(sample)) as { spec: { replicas: number } }).spec.replicas;
  if (replicas !== 2 * roundTrips) throw new Error('the fixed work went wrong');
}

/** Milliseconds for `rounds` × 5,000 JSON round trips of that object on this thread; the best round (the least disturbed). */
export function timeFixedCpuWork(rounds = 3): number {
  let best = Number.POSITIVE_INFINITY;
  for (let round = 0; round < rounds; round++) {
    const started = performance.now();
    fixedCpuWork(5000);
    best = Math.min(best, performance.now() - started);
  }
  return best;
}
