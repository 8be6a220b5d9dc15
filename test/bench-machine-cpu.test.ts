import assert from 'node:assert/strict';
import { test } from 'node:test';
import { commandOf, cpuBetween, cpuNote, parseMachineCpu, parseProcessCpu } from '../bench/machine-cpu.js';

test('a process\'s own and its exited children\'s CPU come from stat fields 14–17, after a command name with spaces', () => {
  const stat = '4242 (node (operator)) S 1 4242 4242 0 -1 4194304 100 0 0 0 250 50 70 30 20 0 11 0 1000 0 0';
  assert.deepEqual(parseProcessCpu(stat), { self: 3, children: 1 });
});

test('the command name is field 2 of stat, parentheses and spaces kept inside', () => {
  assert.equal(commandOf('4242 (node (operator)) S 1 2 3'), 'node (operator)');
});

test('the machine\'s busy and idle seconds come from the cpu line of /proc/stat', () => {
  const text = 'cpu  1000 10 300 5000 40 5 15 30 0 0\ncpu0 500 5 150 2500 20 2 7 15 0 0\n';
  assert.deepEqual(parseMachineCpu(text), { busy: 13.6, idle: 50.4 });
});

test('shares between two snapshots: largest first, children apart, the rest as other', () => {
  const before = {
    processes: { operator: { self: 10, children: 1 }, apiserver: { self: 20, children: 0 } },
    others: new Map([[7, { command: 'git', self: 1, children: 0 }], [8, { command: 'sshd', self: 5, children: 0 }]]),
    machineBusy: 100, machineIdle: 50,
  };
  const after = {
    processes: { operator: { self: 40, children: 9 }, apiserver: { self: 70, children: 0 }, gone: { self: 1, children: 0 } },
    others: new Map([[7, { command: 'git', self: 3, children: 0 }], [9, { command: 'git', self: 1, children: 0 }], [8, { command: 'sshd', self: 5, children: 0 }]]),
    machineBusy: 200, machineIdle: 70,
  };
  const between = cpuBetween(before, after);
  assert.deepEqual(between.shares, [
    { name: 'apiserver', seconds: 50 },
    { name: 'operator', seconds: 30 },
    { name: 'operator\'s child processes', seconds: 8 },
    { name: 'other: git', seconds: 3 },
    { name: 'other: processes gone since, and the kernel', seconds: 9 },
  ]);
  assert.match(cpuNote('during the burst', between, 60), /100 busy CPU seconds of 120 \(2\.0 cores × 60 s, 83 % busy\): apiserver 50\.0 s, operator 30\.0 s/);
});
