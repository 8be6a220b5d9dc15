// `npm run bench -- [--scenarios=1,7] [--quick] [--check] [--no-profile] [--heap-snapshot] [--out=<dir>]`.

export const allScenarios = [1, 2, 3, 4, 5, 6, 7, 8] as const;

export interface BenchArgs {
  scenarios: number[];
  quick: boolean;
  check: boolean;
  /** Record CPU profiles of the operator and the API server during the burst (on unless --no-profile). */
  profile: boolean;
  /** Write a heap snapshot of the operator at the end of the burst (off unless --heap-snapshot: it takes seconds and memory). */
  heapSnapshot: boolean;
  /** Results folder (default bench/results/<timestamp>). */
  out?: string;
}

export function parseBenchArgs(argv: readonly string[]): BenchArgs {
  const args: BenchArgs = { scenarios: [...allScenarios], quick: false, check: false, profile: true, heapSnapshot: false };
  for (const arg of argv) {
    const [flag, value] = arg.includes('=') ? [arg.slice(0, arg.indexOf('=')), arg.slice(arg.indexOf('=') + 1)] : [arg, undefined];
    switch (flag) {
      case '--scenarios': {
        const list = (value ?? '').split(',').map((s) => s.trim()).filter(Boolean).map(Number);
        const bad = list.filter((n) => !(allScenarios as readonly number[]).includes(n));
        if (list.length === 0 || bad.length > 0) throw new Error(`--scenarios: expected numbers among ${allScenarios.join(',')}, got "${value ?? ''}"`);
        args.scenarios = [...new Set(list)].sort((a, b) => a - b);
        break;
      }
      case '--quick': args.quick = true; break;
      case '--check': args.check = true; break;
      case '--no-profile': args.profile = false; break;
      case '--heap-snapshot': args.heapSnapshot = true; break;
      case '--out':
        if (!value) throw new Error('--out needs a folder');
        args.out = value;
        break;
      default:
        throw new Error(`unknown argument "${arg}" (known: --scenarios=1,2,… --quick --check --no-profile --heap-snapshot --out=<dir>)`);
    }
  }
  return args;
}
