// What a benchmark run reports: named figures (each with its unit, the scenario that measured
// it and, where the issue sets one, its target), the raw latency samples behind them, and notes.

export type Unit = 'ms' | 's' | 'MB' | 'count' | 'ratio' | '/min' | '%';

export interface Target {
  /** The value must be at most (`<=`) or at least (`>=`) this. */
  op: '<=' | '>=';
  value: number;
  /** How the issue words it, e.g. "p99 ≤ 20 ms". */
  text: string;
}

export interface Figure {
  scenario: number;
  name: string;
  value: number;
  unit: Unit;
  target?: Target;
  /** What the figure is made of, when not obvious (e.g. "operator ÷ baseline, same run"). */
  note?: string;
}

export interface ScenarioResult {
  scenario: number;
  title: string;
  figures: Figure[];
  /** Latency samples in ms by series label, for the plot and the JSON. */
  samples: Record<string, number[]>;
  notes: string[];
  /** Set when the scenario could not run; its figures are then absent. */
  error?: string;
  durationMs: number;
}

/** How far a figure is from its target: met or not, and by how much. */
export interface Gap {
  met: boolean;
  /** value − target, in the figure's unit. */
  difference: number;
  /** value ÷ target (NaN when the target is 0). */
  factor: number;
}

export function gapOf(figure: Figure): Gap | undefined {
  const t = figure.target;
  if (!t || !Number.isFinite(figure.value)) return undefined;
  const met = t.op === '<=' ? figure.value <= t.value : figure.value >= t.value;
  return { met, difference: figure.value - t.value, factor: t.value === 0 ? Number.NaN : figure.value / t.value };
}
