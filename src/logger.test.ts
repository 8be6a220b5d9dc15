import assert from 'node:assert/strict';
import { test } from 'node:test';
import { createLogger } from './logger.js';

test('JSON lines with level names, context fields from child loggers, errors with stacks, secrets redacted', () => {
  const lines: Record<string, unknown>[] = [];
  const logger = createLogger({ level: 'info', destination: { write: (s: string) => void lines.push(JSON.parse(s)) } });
  const child = logger
    .child({ controller: 'preview-environment' })
    .child({ repository: 'acme/shop', pr: 42, environment: 'pr-42-shop-1a2b3c', component: undefined });
  child.info({ token: 'ghs_secret' }, 'applied');
  child.debug({}, 'hidden at info');
  child.error({ err: new Error('boom') }, 'failed');
  assert.equal(lines.length, 2);
  const [info, error] = lines;
  assert.equal(info!.level, 'info');
  assert.equal(info!.msg, 'applied');
  assert.equal(info!.controller, 'preview-environment');
  assert.equal(info!.repository, 'acme/shop');
  assert.equal(info!.pr, 42);
  assert.equal(info!.environment, 'pr-42-shop-1a2b3c');
  assert.equal(info!.token, '[redacted]');
  assert.ok(!('component' in info!));
  assert.match(String(info!.time), /^\d{4}-\d\d-\d\dT/);
  assert.equal(error!.level, 'error');
  assert.equal((error!.err as { message: string }).message, 'boom');
  assert.match((error!.err as { stack: string }).stack, /Error: boom/);
});
