// The run's figures as a text table for the terminal and as Markdown, optionally with each
// figure's target and the gap to it (`--check`). Figures, not verdicts: nothing here fails.
import { formatMs } from './distribution-plot.js';
import { gapOf, type Figure, type ScenarioResult } from './figures.js';

export function formatValue(value: number, unit: Figure['unit']): string {
  if (!Number.isFinite(value)) return 'n/a';
  switch (unit) {
    case 'ms': return formatMs(value);
    case 's': return `${+value.toFixed(value >= 100 ? 0 : 2)} s`;
    case 'MB': return `${value.toFixed(1)} MB`;
    case 'ratio': return `${value.toFixed(2)}×`;
    case '/min': return `${+value.toFixed(2)} /min`;
    case '%': return `${value.toFixed(1)} %`;
    case 'count': return Number.isInteger(value) ? String(value) : value.toFixed(2);
  }
}

/** The gap column: "met" with the margin, or how far over/under the target the figure is. */
export function formatGap(figure: Figure): string {
  const gap = gapOf(figure);
  if (!figure.target) return '';
  if (!gap) return 'not measured';
  const diff = formatValue(Math.abs(gap.difference), figure.unit);
  const factor = Number.isFinite(gap.factor) ? ` (${gap.factor.toFixed(2)}× target)` : '';
  if (gap.met) return gap.difference === 0 ? 'met' : `met, ${diff} to spare${factor}`;
  return `missed by ${diff}${factor}`;
}

interface Row {
  cells: string[];
}

function rows(results: readonly ScenarioResult[], check: boolean): { header: string[]; body: Row[] } {
  const header = ['#', 'figure', 'value', ...(check ? ['target', 'gap'] : [])];
  const body: Row[] = [];
  for (const r of results) {
    if (r.error) {
      body.push({ cells: [String(r.scenario), `${r.title}: not run`, r.error.split('\n')[0]!.slice(0, 120), ...(check ? ['', ''] : [])] });
      continue;
    }
    for (const f of r.figures) {
      body.push({ cells: [String(f.scenario), f.name, formatValue(f.value, f.unit), ...(check ? [f.target?.text ?? '', formatGap(f)] : [])] });
    }
  }
  return { header, body };
}

export function renderTextTable(results: readonly ScenarioResult[], options: { check?: boolean } = {}): string {
  const { header, body } = rows(results, options.check ?? false);
  const all = [header, ...body.map((r) => r.cells)];
  const widths = header.map((_, i) => Math.max(...all.map((cells) => [...(cells[i] ?? '')].length)));
  const line = (cells: string[]) => cells.map((c, i) => c + ' '.repeat(widths[i]! - [...c].length)).join('  ').trimEnd();
  return [line(header), widths.map((w) => '-'.repeat(w)).join('  '), ...body.map((r) => line(r.cells))].join('\n') + '\n';
}

export function renderMarkdownTable(results: readonly ScenarioResult[], options: { check?: boolean } = {}): string {
  const { header, body } = rows(results, options.check ?? false);
  const esc = (c: string) => c.replace(/\|/g, '\\|');
  return [
    `| ${header.join(' | ')} |`,
    `|${header.map((_, i) => (i === 0 ? '---:' : i === 2 ? '---:' : '---')).join('|')}|`,
    ...body.map((r) => `| ${r.cells.map(esc).join(' | ')} |`),
  ].join('\n') + '\n';
}
