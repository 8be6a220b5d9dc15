// Reads the Prometheus text exposition format (what the operator's /metrics serves, version
// 0.0.4): one sample per line, `name{label="value",…} value [timestamp]`; comments skipped.

export interface PromSample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

const unescapeLabel = (s: string) => s.replace(/\\(["\\n])/g, (_, c: string) => (c === 'n' ? '\n' : c));

function parseValue(text: string): number {
  if (text === '+Inf') return Number.POSITIVE_INFINITY;
  if (text === '-Inf') return Number.NEGATIVE_INFINITY;
  return Number(text); // "NaN" → NaN
}

export function parsePrometheusText(text: string): PromSample[] {
  const out: PromSample[] = [];
  for (const raw of text.split('\n')) {
    const line = raw.trim();
    if (line === '' || line.startsWith('#')) continue;
    const brace = line.indexOf('{');
    const space = line.indexOf(' ');
    const labels: Record<string, string> = {};
    let name: string;
    let rest: string;
    if (brace >= 0 && (space < 0 || brace < space)) {
      name = line.slice(0, brace);
      // Label values may contain '}' and ',' inside quotes: read pair by pair.
      const pair = /\s*([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"\s*,?/y;
      let i = brace + 1;
      for (;;) {
        pair.lastIndex = i;
        const m = pair.exec(line);
        if (!m) break;
        labels[m[1]!] = unescapeLabel(m[2]!);
        i = pair.lastIndex;
      }
      if (line[i] !== '}') throw new Error(`malformed labels in metrics line: ${line}`);
      rest = line.slice(i + 1).trim();
    } else {
      name = line.slice(0, space);
      rest = line.slice(space + 1).trim();
    }
    const value = parseValue(rest.split(/\s+/)[0] ?? '');
    out.push({ name, labels, value });
  }
  return out;
}
