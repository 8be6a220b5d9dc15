// A self-contained SVG of latency distributions: one horizontal box plot per series (whiskers
// at min and max, box from p25 to p75, a bar at the median, a tick at p95), on a log scale when
// the series span more than two decades, so a 5 ms webhook and a 5 s deployment fit one chart.
import { summarize, type Summary } from './stats.js';

export interface PlotSeries {
  label: string;
  /** Samples in milliseconds. */
  samples: readonly number[];
}

export interface PlotOptions {
  title: string;
  width?: number;
}

const rowHeight = 28;
const labelWidth = 260;
const margin = { top: 40, right: 30, bottom: 40 };

function escapeXml(text: string): string {
  return text.replace(/[<>&'"]/g, (c) => ({ '<': '&lt;', '>': '&gt;', '&': '&amp;', "'": '&apos;', '"': '&quot;' })[c]!);
}

/** A round number for a tick label: 1.5 ms, 20 ms, 2.5 s. */
export function formatMs(ms: number): string {
  if (!Number.isFinite(ms)) return '–';
  if (ms < 0) return `−${formatMs(-ms)}`;
  if (ms >= 1000) return `${+(ms / 1000).toPrecision(3)} s`;
  if (ms >= 1) return `${+ms.toPrecision(3)} ms`;
  return `${+(ms * 1000).toPrecision(3)} µs`;
}

interface Scale {
  x(ms: number): number;
  ticks: number[];
}

function scaleFor(min: number, max: number, x0: number, x1: number): Scale {
  const lo = Math.max(min, 1e-3);
  const hi = Math.max(max, lo * 1.01);
  if (hi / lo > 100) {
    const a = Math.floor(Math.log10(lo));
    const b = Math.ceil(Math.log10(hi));
    const ticks: number[] = [];
    for (let e = a; e <= b; e++) ticks.push(10 ** e);
    const x = (ms: number) => x0 + ((Math.log10(Math.max(ms, 10 ** a)) - a) / (b - a)) * (x1 - x0);
    return { x, ticks };
  }
  const step = niceStep((hi - 0) / 5);
  const top = Math.ceil(hi / step) * step;
  const ticks: number[] = [];
  for (let t = 0; t <= top + step / 2; t += step) ticks.push(t);
  return { x: (ms: number) => x0 + (ms / top) * (x1 - x0), ticks };
}

function niceStep(raw: number): number {
  const e = 10 ** Math.floor(Math.log10(raw));
  const f = raw / e;
  return (f <= 1 ? 1 : f <= 2 ? 2 : f <= 5 ? 5 : 10) * e;
}

/** The SVG document (a string); series without samples are drawn as "no data". */
export function renderDistributionSvg(series: readonly PlotSeries[], options: PlotOptions): string {
  const width = options.width ?? 900;
  const summaries: Array<{ label: string; s: Summary }> = series.map((x) => ({ label: x.label, s: summarize(x.samples) }));
  const present = summaries.filter((x) => x.s.count > 0);
  const height = margin.top + Math.max(1, summaries.length) * rowHeight + margin.bottom;
  const x0 = labelWidth;
  const x1 = width - margin.right;
  const scale = present.length
    ? scaleFor(Math.min(...present.map((x) => x.s.min)), Math.max(...present.map((x) => x.s.max)), x0, x1)
    : scaleFor(1, 10, x0, x1);
  const out: string[] = [];
  out.push(`<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" font-family="sans-serif" font-size="12">`);
  out.push(`<rect width="${width}" height="${height}" fill="white"/>`);
  out.push(`<text x="${width / 2}" y="22" text-anchor="middle" font-size="15" font-weight="bold">${escapeXml(options.title)}</text>`);
  const plotBottom = height - margin.bottom;
  for (const t of scale.ticks) {
    const x = scale.x(t).toFixed(1);
    out.push(`<line x1="${x}" y1="${margin.top - 6}" x2="${x}" y2="${plotBottom}" stroke="#ddd"/>`);
    out.push(`<text x="${x}" y="${plotBottom + 16}" text-anchor="middle" fill="#444">${escapeXml(formatMs(t))}</text>`);
  }
  summaries.forEach(({ label, s }, i) => {
    const cy = margin.top + i * rowHeight + rowHeight / 2;
    out.push(`<text x="${x0 - 10}" y="${cy + 4}" text-anchor="end">${escapeXml(label)}${s.count ? ` (n=${s.count})` : ''}</text>`);
    if (s.count === 0) {
      out.push(`<text x="${x0 + 6}" y="${cy + 4}" fill="#999">no data</text>`);
      return;
    }
    const [xmin, x25, x50, x75, x95, xmax] = [s.min, s.p25, s.p50, s.p75, s.p95, s.max].map((v) => scale.x(v));
    const h = rowHeight * 0.55;
    out.push(`<line x1="${xmin!.toFixed(1)}" y1="${cy}" x2="${xmax!.toFixed(1)}" y2="${cy}" stroke="#555"/>`);
    for (const xe of [xmin!, xmax!]) out.push(`<line x1="${xe.toFixed(1)}" y1="${cy - h / 3}" x2="${xe.toFixed(1)}" y2="${cy + h / 3}" stroke="#555"/>`);
    out.push(`<rect x="${x25!.toFixed(1)}" y="${(cy - h / 2).toFixed(1)}" width="${Math.max(1, x75! - x25!).toFixed(1)}" height="${h.toFixed(1)}" fill="#9ecae1" stroke="#3182bd"/>`);
    out.push(`<line x1="${x50!.toFixed(1)}" y1="${(cy - h / 2).toFixed(1)}" x2="${x50!.toFixed(1)}" y2="${(cy + h / 2).toFixed(1)}" stroke="#08306b" stroke-width="2"/>`);
    out.push(`<line x1="${x95!.toFixed(1)}" y1="${(cy - h / 2).toFixed(1)}" x2="${x95!.toFixed(1)}" y2="${(cy + h / 2).toFixed(1)}" stroke="#e6550d" stroke-width="2"/>`);
    out.push(`<title>${escapeXml(`${label}: p50 ${formatMs(s.p50)}, p95 ${formatMs(s.p95)}, max ${formatMs(s.max)}`)}</title>`);
  });
  out.push(`<text x="${x0}" y="${height - 8}" fill="#666">box p25–p75, dark bar median, orange tick p95, whiskers min–max</text>`);
  out.push('</svg>');
  return `${out.join('\n')}\n`;
}
