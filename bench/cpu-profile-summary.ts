// Where a V8 CPU profile (.cpuprofile, as node --cpu-prof or the inspector writes it) spends its
// time: self time per function (the frame on top of the stack when sampled) and inclusive
// time per function (on the stack at all), as percentages of the samples, plus the share of
// time by area (the operator's own folders, each dependency, Node internals, idle, GC).

export interface CpuProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number; columnNumber?: number };
  hitCount?: number;
  children?: number[];
}

export interface CpuProfile {
  nodes: CpuProfileNode[];
  startTime: number;
  endTime: number;
  samples?: number[];
  timeDeltas?: number[];
}

export interface FrameShare {
  frame: string;
  area: string;
  selfPercent: number;
  totalPercent: number;
}

export interface ProfileSummary {
  durationMs: number;
  samples: number;
  topSelf: FrameShare[];
  topTotal: FrameShare[];
  areas: Array<{ area: string; selfPercent: number }>;
  headline: string;
  markdown: string;
}

/** The part of the code a frame belongs to: `src/kube`, `node_modules/yaml`, `(idle)`, `node:internal`. */
export function areaOf(url: string, functionName: string): string {
  if (!url) return functionName.startsWith('(') ? functionName : '(native)';
  if (url.startsWith('node:')) return 'node internals';
  const nm = url.lastIndexOf('/node_modules/');
  if (nm >= 0) {
    const rest = url.slice(nm + '/node_modules/'.length).split('/');
    return `node_modules/${rest[0]!.startsWith('@') ? `${rest[0]}/${rest[1]}` : rest[0]}`;
  }
  const own = /\/(src\/[a-z-]+|constructs|bench|test\/[a-z-]+)\//.exec(url);
  return own ? own[1]! : 'other';
}

function frameName(node: CpuProfileNode): string {
  const { functionName, url, lineNumber } = node.callFrame;
  const file = url ? url.replace(/^.*\/(node_modules\/|src\/|constructs\/)/, '$1') : '';
  return `${functionName || '(anonymous)'}${file ? ` ${file}:${lineNumber + 1}` : ''}`;
}

export function summarizeCpuProfile(profile: CpuProfile, options: { top?: number } = {}): ProfileSummary {
  const top = options.top ?? 15;
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const parent = new Map<number, number>();
  for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  // Sample weights: time deltas when present (they are what the profile measured), else hit counts.
  const selfTime = new Map<number, number>();
  if (profile.samples && profile.timeDeltas && profile.samples.length === profile.timeDeltas.length) {
    for (let i = 0; i < profile.samples.length; i++) {
      const next = profile.timeDeltas[i + 1] ?? 0;
      selfTime.set(profile.samples[i]!, (selfTime.get(profile.samples[i]!) ?? 0) + Math.max(0, next));
    }
  } else {
    for (const n of profile.nodes) selfTime.set(n.id, n.hitCount ?? 0);
  }
  const total = [...selfTime.values()].reduce((a, b) => a + b, 0) || 1;
  const self = new Map<string, { area: string; t: number }>();
  const inclusive = new Map<string, { area: string; t: number }>();
  const areas = new Map<string, number>();
  for (const [id, t] of selfTime) {
    if (t === 0) continue;
    const node = byId.get(id)!;
    const name = frameName(node);
    const area = areaOf(node.callFrame.url, node.callFrame.functionName);
    self.set(name, { area, t: (self.get(name)?.t ?? 0) + t });
    areas.set(area, (areas.get(area) ?? 0) + t);
    // Each function counts once per sample however often it recurses.
    const onStack = new Set<string>();
    for (let cur: number | undefined = id; cur !== undefined; cur = parent.get(cur)) {
      const n = byId.get(cur)!;
      const fname = frameName(n);
      if (n.callFrame.functionName === '(root)' || onStack.has(fname)) continue;
      onStack.add(fname);
      inclusive.set(fname, { area: areaOf(n.callFrame.url, n.callFrame.functionName), t: (inclusive.get(fname)?.t ?? 0) + t });
    }
  }
  const pct = (t: number) => (100 * t) / total;
  const share = (m: Map<string, { area: string; t: number }>, name: string): FrameShare => ({
    frame: name, area: m.get(name)!.area, selfPercent: pct(self.get(name)?.t ?? 0), totalPercent: pct(inclusive.get(name)?.t ?? 0),
  });
  const topSelf = [...self.entries()].sort((a, b) => b[1].t - a[1].t).slice(0, top).map(([k]) => share(self, k));
  const topTotal = [...inclusive.entries()]
    .filter(([k]) => !/^\((program|idle|garbage collector)\)/.test(k))
    .sort((a, b) => b[1].t - a[1].t).slice(0, top).map(([k]) => share(inclusive, k));
  const areaList = [...areas.entries()].sort((a, b) => b[1] - a[1]).map(([area, t]) => ({ area, selfPercent: pct(t) }));
  const durationMs = (profile.endTime - profile.startTime) / 1000;
  const busy = 100 - pct(self.get('(idle)')?.t ?? 0);
  const headline = `${durationMs.toFixed(0)} ms profiled, ${busy.toFixed(0)} % not idle; by area: ${areaList.slice(0, 6).map((a) => `${a.area} ${a.selfPercent.toFixed(1)} %`).join(', ')}; top self: ${topSelf.filter((f) => !f.frame.startsWith('(idle)')).slice(0, 3).map((f) => `${f.frame} ${f.selfPercent.toFixed(1)} %`).join('; ')}.`;
  const row = (f: FrameShare) => `| ${f.frame.replace(/\|/g, '\\|')} | ${f.area} | ${f.selfPercent.toFixed(1)} | ${f.totalPercent.toFixed(1)} |`;
  const markdown = [
    `Profile: ${durationMs.toFixed(0)} ms, ${profile.samples?.length ?? 0} samples, ${busy.toFixed(0)} % not idle.`,
    '', '| area | self % |', '|---|---:|', ...areaList.map((a) => `| ${a.area} | ${a.selfPercent.toFixed(1)} |`),
    '', `Top ${top} by self time:`, '', '| frame | area | self % | total % |', '|---|---|---:|---:|', ...topSelf.map(row),
    '', `Top ${top} by inclusive time:`, '', '| frame | area | self % | total % |', '|---|---|---:|---:|', ...topTotal.map(row), '',
  ].join('\n');
  return { durationMs, samples: profile.samples?.length ?? 0, topSelf, topTotal, areas: areaList, headline, markdown };
}
