// The closed loop's slowest answers, grouped by when they were read: one stall of the receiver
// shows as one group of as many answers as were in flight.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { slowestAnswerGroups } from '../bench/answer-stalls.js';

/** `count` answers, 20 in flight, one every 0.5 ms at 10 ms each; `stalls` hold up every answer in flight. */
function closedLoop(stalls: { at: number; ms: number }[], count = 2000): { ms: number; endedAt: number }[] {
  const answers: { ms: number; endedAt: number }[] = [];
  let clock = 0;
  for (let i = 0; i < count; i++) {
    clock += 0.5;
    const stall = stalls.find((s) => s.at === i);
    if (stall) clock += stall.ms;
    // The 20 answers read right after a stall waited through it.
    const waited = stalls.find((s) => i >= s.at && i < s.at + 20)?.ms ?? 0;
    answers.push({ ms: 10 + waited, endedAt: clock });
  }
  return answers;
}

test('one stall that holds up every request in flight is one group of the slowest answers', () => {
  const groups = slowestAnswerGroups(closedLoop([{ at: 700, ms: 25 }]));
  assert.deepEqual(groups, { slowest: 20, groups: 1, largest: 20 });
});

test('two stalls apart are two groups; slow answers spread over the run are as many groups', () => {
  // 4,000 answers: the slowest 1 % is 40, both stalls' answers.
  assert.deepEqual(slowestAnswerGroups(closedLoop([{ at: 300, ms: 30 }, { at: 2500, ms: 25 }], 4000)), { slowest: 40, groups: 2, largest: 20 });
  const spread = Array.from({ length: 2000 }, (_, i) => ({ ms: i % 100 === 0 ? 50 : 10, endedAt: i * 0.5 }));
  assert.deepEqual(slowestAnswerGroups(spread), { slowest: 20, groups: 20, largest: 1 });
});

test('no answers, no groups', () => {
  assert.deepEqual(slowestAnswerGroups([]), { slowest: 0, groups: 0, largest: 0 });
});
