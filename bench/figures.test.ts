import assert from 'node:assert/strict';
import { test } from 'node:test';
import { atMost, figure, formatGap, formatValue, renderTable, type ScenarioResult } from './figures.js';

test('each figure is printed with its target and the gap to it', () => {
  assert.equal(formatGap(figure(4, 'cpu', 48, 'ms', atMost(15, '≤ 15 ms'))), 'missed by 33 ms (3.20× target)');
  assert.equal(formatGap(figure(4, 'ratio', 1.2, 'ratio', atMost(1.3, '≤ 1.3×'))), 'met, 0.10× to spare');
  assert.equal(formatGap(figure(5, 'writes', 0, '/min', atMost(0))), 'met');
  assert.equal(formatGap(figure(5, 'writes', 2, '/min', atMost(0))), 'missed by 2 /min');
  assert.equal(formatGap(figure(4, 'x', Number.NaN, 's', atMost(1))), 'not measured');
  assert.equal(formatGap(figure(4, 'x', 3, 's')), '');
  const values = [formatValue(1530, 'ms'), formatValue(4.25, 'ms'), formatValue(2.5, 'count'), formatValue(Number.NaN, 's')];
  assert.deepEqual(values, ['1.53 s', '4.3 ms', '2.50', 'n/a']);
});

test('the table: one row per figure, a scenario that did not run says why', () => {
  const results: ScenarioResult[] = [
    { scenario: 4, title: 'Burst', notes: [], figures: [figure(4, 'all applied ÷ bare | burst', 1.6, 'ratio', atMost(1.3, '≤ 1.3×'))] },
    { scenario: 6, title: 'Resync', notes: [], figures: [], error: 'no cluster\nstack' },
  ];
  const [, , burst, resync] = renderTable(results).split('\n');
  assert.equal(burst, '| 4 | all applied ÷ bare \\| burst | 1.60× | ≤ 1.3× | missed by 0.30× (1.23× target) |');
  assert.equal(resync, '| 6 | Resync: failed | no cluster |  |  |');
});
