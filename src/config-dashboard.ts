// The dashboard's settings: on or off, its port, which must be its own (the webhook port is
// the one exposed to GitHub; the dashboard is reached by a port-forward, never through it), and its
// address: loopback unless set, since the page has no login of its own.
import type { OperatorConfig } from './config.js';
import type { SettingReader } from './config-reader.js';

export function dashboardSettings(read: SettingReader): OperatorConfig['dashboard'] {
  const enabled = read.bool('dashboard');
  const port = read.int('dashboard-port', 0, 65535);
  if (enabled && port) {
    // Read as written: the webhook and metrics ports report their own problems.
    for (const other of ['webhook-port', 'metrics-port'] as const) {
      if (Number(read.raw(other)?.value) === port)
        read.problem('dashboard-port', `${port} is also --${other}: the dashboard needs a port of its own`);
    }
  }
  return { enabled: enabled!, port: port!, host: read.str('dashboard-host')! };
}
