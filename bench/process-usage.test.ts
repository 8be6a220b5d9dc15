import assert from 'node:assert/strict';
import { test } from 'node:test';
import { parseProcessUsage, processUsage } from './process-usage.js';

test("peak RSS comes from VmHWM and CPU seconds from utime + stime + the exited children's, spaces in the name or not", async () => {
  const status = 'Name:\tnode\nVmHWM:\t  262144 kB\nVmRSS:\t  131072 kB\n';
  // pid (comm) state ppid …: utime 250, stime 50, cutime 30, cstime 20 ticks
  const stat = '4242 (node (bench) x) S 1 4242 4242 0 -1 4194304 100 0 0 0 250 50 30 20 20 0 11 0 1000 0 0';
  assert.deepEqual(parseProcessUsage(status, stat), { peakRssMb: 256, rssMb: 128, cpuSeconds: 3.5 });
  const own = await processUsage(process.pid);
  assert.ok(own.peakRssMb >= own.rssMb && own.rssMb > 10 && own.cpuSeconds > 0, JSON.stringify(own));
});
