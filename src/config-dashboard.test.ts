import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ConfigError, loadConfig } from './config.js';

const load = (args: string[], env: Record<string, string> = {}) =>
  loadConfig({ args: ['--controllers=algorithm', ...args], env, purpose: 'run' });

test('the dashboard is on by default, on loopback port 8081; a flag or variable turns it off or moves it', () => {
  const host = '127.0.0.1';
  assert.deepEqual(load([]).dashboard, { enabled: true, port: 8081, host });
  assert.deepEqual(load(['--dashboard=false']).dashboard, { enabled: false, port: 8081, host });
  assert.deepEqual(load([], { PREVIEW_OPERATOR_DASHBOARD_PORT: '0' }).dashboard, { enabled: true, port: 0, host });
  assert.deepEqual(load(['--dashboard-host=0.0.0.0']).dashboard, { enabled: true, port: 8081, host: '0.0.0.0' });
});

test("a port of its own: not the webhook's, not the metrics'; bad values are named", () => {
  const issues = (args: string[]) => {
    try {
      load(args);
      return [];
    } catch (err) {
      assert.ok(err instanceof ConfigError);
      return err.issues.map((i) => `${i.setting}: ${i.message}`);
    }
  };
  assert.deepEqual(issues(['--dashboard-port=8080']), [
    '--dashboard-port (PREVIEW_OPERATOR_DASHBOARD_PORT): 8080 is also --webhook-port: the dashboard needs a port of its own',
  ]);
  assert.deepEqual(issues(['--dashboard-port=9100', '--metrics-port=9100']), [
    '--dashboard-port (PREVIEW_OPERATOR_DASHBOARD_PORT): 9100 is also --metrics-port: the dashboard needs a port of its own',
  ]);
  assert.deepEqual(issues(['--dashboard-port=8080', '--dashboard=false']), [], 'off: its port does not matter');
  assert.deepEqual(issues(['--dashboard=sometimes', '--dashboard-port=http']), [
    '--dashboard (PREVIEW_OPERATOR_DASHBOARD): --dashboard=sometimes: must be true or false',
    '--dashboard-port (PREVIEW_OPERATOR_DASHBOARD_PORT): --dashboard-port=http: must be a whole number',
  ]);
});
