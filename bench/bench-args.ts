// `npm run bench -- [--scenarios=1,4] [--quick] [--bursts=50,200,1000] [--profile] [--heap-snapshot] [--out=<dir>]`.
import { parseArgs } from 'node:util';

export const allScenarios = [1, 2, 3, 4, 5, 6, 7, 8, 9] as const;

export interface BenchArgs {
  scenarios: number[];
  quick: boolean;
  /** Burst sizes, each against a bare burst of its own size (default 50 and 200, 50 when quick; 1,000 on request). */
  bursts: number[];
  /** The operator under --cpu-prof, and the API server's pprof over the first burst. */
  profile: boolean;
  /** A heap snapshot of the operator (--heapsnapshot-signal) after the idle period. */
  heapSnapshot: boolean;
  /** Results folder (default bench/results/<timestamp>). */
  out?: string;
}

const numbers = (flag: string, value: string, ok: (n: number) => boolean): number[] => {
  const list = value.split(',').map(Number);
  if (!list.every((n) => Number.isInteger(n) && ok(n))) throw new Error(`--${flag}: unexpected "${value}"`);
  return [...new Set(list)].sort((a, b) => a - b);
};

export function parseBenchArgs(argv: readonly string[]): BenchArgs {
  const [text, flag] = [{ type: 'string' }, { type: 'boolean' }] as const;
  const options = { scenarios: text, bursts: text, out: text, quick: flag, profile: flag, 'heap-snapshot': flag };
  const { values } = parseArgs({ args: [...argv], options });
  const quick = values.quick ?? false;
  return {
    scenarios: numbers('scenarios', values.scenarios ?? allScenarios.join(','), (n) => (allScenarios as readonly number[]).includes(n)),
    quick,
    bursts: values.bursts ? numbers('bursts', values.bursts, (n) => n >= 1 && n <= 2000) : quick ? [50] : [50, 200],
    profile: values.profile ?? false,
    heapSnapshot: values['heap-snapshot'] ?? false,
    ...(values.out ? { out: values.out } : {}),
  };
}
