// What a run reports: named figures, each with its unit and, where issue 24 sets one, its target
// and the gap to it. Figures, not verdicts: nothing fails.

export type Unit = 'ms' | 's' | 'MB' | 'count' | 'ratio' | '/min';

/** The most a figure may be (every target of issue 24 is a ceiling), and how the issue words it, e.g. "≤ 15 ms". */
export type Target = { value: number; text: string };

export interface Figure {
  scenario: number;
  name: string;
  value: number;
  unit: Unit;
  target?: Target;
}

export interface ScenarioResult {
  scenario: number;
  title: string;
  figures: Figure[];
  notes: string[];
  /** Set when the scenario could not run; its figures are then absent. */
  error?: string;
}

/** A scenario's figures and notes, without its number and title. */
export type Measured = Pick<ScenarioResult, 'figures' | 'notes'>;

export const atMost = (value: number, text = `≤ ${value}`): Target => ({ value, text });

export function figure(scenario: number, name: string, value: number, unit: Unit, target?: Target): Figure {
  return { scenario, name, value, unit, target };
}

const formats: Record<Unit, (v: number) => string> = {
  ms: (v) => (v >= 1000 ? `${(v / 1000).toFixed(2)} s` : `${+v.toFixed(v >= 10 ? 0 : 1)} ms`),
  s: (v) => `${+v.toFixed(v >= 100 ? 0 : 2)} s`,
  MB: (v) => `${v.toFixed(1)} MB`,
  ratio: (v) => `${v.toFixed(2)}×`,
  '/min': (v) => `${+v.toFixed(2)} /min`,
  count: (v) => (Number.isInteger(v) ? String(v) : v.toFixed(2)),
};

export const formatValue = (value: number, unit: Unit): string => (Number.isFinite(value) ? formats[unit](value) : 'n/a');

/** "met", "met, 3 ms to spare" or "missed by 33 ms (3.2× target)"; empty without a target. */
export function formatGap(figure: Figure): string {
  const t = figure.target;
  if (!t) return '';
  if (!Number.isFinite(figure.value)) return 'not measured';
  const difference = Math.abs(figure.value - t.value);
  const factor = t.value !== 0 ? ` (${(figure.value / t.value).toFixed(2)}× target)` : '';
  if (figure.value <= t.value) return difference === 0 ? 'met' : `met, ${formatValue(difference, figure.unit)} to spare`;
  return `missed by ${formatValue(difference, figure.unit)}${factor}`;
}

/** Each figure, then why the scenario stopped if it did (the figures measured before stay). */
function rows(results: readonly ScenarioResult[]): string[][] {
  return results.flatMap((r) => [
    ...r.figures.map((f) => [String(f.scenario), f.name, formatValue(f.value, f.unit), f.target?.text ?? '', formatGap(f)]),
    ...(r.error ? [[String(r.scenario), `${r.title}: failed`, r.error.split('\n')[0]!.slice(0, 120), '', '']] : []),
  ]);
}

/** One row per figure (a scenario that did not run says why), for the terminal and results.md. */
export function renderTable(results: readonly ScenarioResult[]): string {
  const esc = (c: string) => c.replace(/\|/g, '\\|');
  const lines = rows(results).map((r) => `| ${r.map(esc).join(' | ')} |`);
  return ['| # | figure | value | target | gap |', '|---:|---|---:|---|---|', ...lines].join('\n') + '\n';
}
