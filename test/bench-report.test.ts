// The bench's output: the table with targets and gaps, the SVG plot and the profile summary.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { summarizeCpuProfile, areaOf, type CpuProfile } from '../bench/cpu-profile-summary.js';
import { formatMs, renderDistributionSvg } from '../bench/distribution-plot.js';
import type { ScenarioResult } from '../bench/figures.js';
import { formatGap, renderMarkdownTable, renderTextTable } from '../bench/results-table.js';

const result: ScenarioResult = {
  scenario: 1,
  title: 'Webhook intake',
  figures: [
    { scenario: 1, name: 'webhook answer p99', value: 30, unit: 'ms', target: { op: '<=', value: 20, text: 'p99 ≤ 20 ms' } },
    { scenario: 1, name: 'webhook answer p50', value: 5, unit: 'ms', target: { op: '<=', value: 20, text: '≤ 20 ms' } },
    { scenario: 1, name: 'deliveries', value: 2000, unit: 'count' },
  ],
  samples: {},
  notes: [],
  durationMs: 1,
};

test('the gap says how far a figure misses or beats its target', () => {
  assert.equal(formatGap(result.figures[0]!), 'missed by 10 ms (1.50× target)');
  assert.equal(formatGap(result.figures[1]!), 'met, 15 ms to spare (0.25× target)');
  assert.equal(formatGap(result.figures[2]!), '');
  assert.equal(formatGap({ scenario: 5, name: 'writes', value: 0, unit: '/min', target: { op: '<=', value: 0, text: 'zero' } }), 'met');
  assert.equal(formatGap({ scenario: 5, name: 'writes', value: 4, unit: '/min', target: { op: '<=', value: 0, text: 'zero' } }), 'missed by 4 /min');
  assert.equal(formatGap({ scenario: 2, name: 'x', value: Number.NaN, unit: 'ms', target: { op: '<=', value: 1, text: 't' } }), 'not measured');
});

test('the text table aligns columns and shows targets only with --check; a failed scenario is a row saying why', () => {
  const failed: ScenarioResult = { scenario: 4, title: 'Burst', figures: [], samples: {}, notes: [], error: 'operator exited\nstack', durationMs: 1 };
  const plain = renderTextTable([result, failed]);
  assert.ok(!plain.includes('target'));
  const checked = renderTextTable([result, failed], { check: true }).split('\n');
  assert.match(checked[0]!, /^#\s+figure\s+value\s+target\s+gap$/);
  const p99 = checked.find((l) => l.includes('webhook answer p99'))!;
  assert.ok(p99.includes('30 ms') && p99.includes('p99 ≤ 20 ms') && p99.includes('missed by 10 ms'));
  assert.equal(checked[2]!.indexOf('webhook'), checked[3]!.indexOf('webhook'));
  assert.ok(checked.some((l) => l.includes('Burst: not run') && l.includes('operator exited') && !l.includes('stack')));
});

test('the Markdown table escapes pipes and has one row per figure', () => {
  const md = renderMarkdownTable([{ ...result, figures: [{ scenario: 1, name: 'a | b', value: 1, unit: 'ratio' }] }], { check: true });
  const lines = md.trim().split('\n');
  assert.equal(lines.length, 3);
  assert.ok(lines[2]!.includes('a \\| b') && lines[2]!.includes('1.00×'));
});

test('milliseconds are shown in the unit that reads best', () => {
  assert.equal(formatMs(0.5), '500 µs');
  assert.equal(formatMs(12.34), '12.3 ms');
  assert.equal(formatMs(2500), '2.5 s');
  assert.equal(formatMs(-98), '−98 ms');
});

test('the SVG has one box per series at the right place, a log axis for wide ranges, and escapes labels', () => {
  const svg = renderDistributionSvg([
    { label: 'fast <webhook>', samples: [1, 2, 3, 4, 5] },
    { label: 'slow', samples: [1000, 2000, 3000, 4000, 5000] },
    { label: 'empty', samples: [] },
  ], { title: 'T & U', width: 1000 });
  assert.ok(svg.startsWith('<svg xmlns="http://www.w3.org/2000/svg"'));
  assert.ok(svg.includes('fast &lt;webhook&gt; (n=5)') && svg.includes('T &amp; U'));
  assert.ok(svg.includes('no data'));
  const boxes = [...svg.matchAll(/<rect x="([\d.]+)" y="[\d.]+" width="([\d.]+)"[^>]*fill="#9ecae1"/g)].map((m) => Number(m[1]));
  assert.equal(boxes.length, 2);
  assert.ok(boxes[1]! > boxes[0]! + 300, 'the slow series sits far right of the fast one');
  // 1 ms .. 5 s spans more than two decades: the axis is logarithmic (ticks 1 ms, 10 ms, …, 10 s).
  for (const tick of ['1 ms', '10 ms', '100 ms', '1 s', '10 s']) assert.ok(svg.includes(`>${tick}</text>`), tick);
});

test('the profile summary attributes self and inclusive time to functions and areas', () => {
  // root → handle (src/kube) → parse (node_modules/yaml); samples: 2 in parse, 1 in handle, 1 idle.
  const profile: CpuProfile = {
    startTime: 0, endTime: 4000,
    nodes: [
      { id: 1, callFrame: { functionName: '(root)', url: '', lineNumber: -1 }, children: [2, 4] },
      { id: 2, callFrame: { functionName: 'handle', url: 'file:///w/src/kube/controller.ts', lineNumber: 9 }, children: [3] },
      { id: 3, callFrame: { functionName: 'parse', url: 'file:///w/node_modules/yaml/dist/index.js', lineNumber: 0 } },
      { id: 4, callFrame: { functionName: '(idle)', url: '', lineNumber: -1 } },
    ],
    samples: [3, 3, 2, 4],
    timeDeltas: [0, 1000, 1000, 1000],
  };
  // Weights: sample i lasts until sample i+1 (the last one has no known end: 0).
  const s = summarizeCpuProfile(profile);
  const parse = s.topSelf.find((f) => f.frame.startsWith('parse'))!;
  const handle = s.topTotal.find((f) => f.frame.startsWith('handle'))!;
  assert.equal(parse.area, 'node_modules/yaml');
  assert.equal(Math.round(parse.selfPercent), 67);
  assert.equal(Math.round(handle.totalPercent), 100);
  assert.equal(Math.round(handle.selfPercent), 33);
  assert.equal(areaOf('node:internal/streams/readable', 'read'), 'node internals');
  assert.equal(areaOf('file:///w/node_modules/@kubernetes/client-node/dist/x.js', 'f'), 'node_modules/@kubernetes/client-node');
  assert.ok(s.markdown.includes('| node_modules/yaml |'));
});
