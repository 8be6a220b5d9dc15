// The answer as the sandboxed code may forge it: the harness writes it, but the code runs in the
// same process and can write its own (the nonce is on the harness's write). Whatever it is, the
// operator gets a SandboxError, never an exception of its own that a reconcile would retry.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { defaultOutputLimits } from './rendered-output-limits.js';
import { readAnswer, type ProcessEnd } from './sandbox-answer.js';
import { SandboxError } from './sandbox-error.js';

const nonce = 'n0nce';
const end: ProcessEnd = { entry: '.preview/main.ts', code: 1, signal: null, checkoutDir: '/work/checkout' };
const answer = (response: unknown) => readAnswer(`${nonce}\n${JSON.stringify(response)}`, nonce, end, defaultOutputLimits);

test("a failure in a shape the harness never writes is bad output, not the operator's own error", () => {
  const forged = [
    null,
    'boom',
    [],
    { kind: 'exception' },
    { kind: 'permission', message: 'x', resource: 7 },
    { kind: 'permission', message: 'x', permission: { toString: 1 } },
    { kind: 'exception', message: 'x', location: ['a'] },
    { kind: 'crash', message: 'x' },
  ];
  // A permission named like an Object.prototype member is described as unknown, not called.
  for (const permission of ['__defineGetter__', '__defineSetter__', 'constructor', 'toString']) {
    assert.throws(
      () => answer({ ok: false, error: { kind: 'permission', message: 'x', permission, resource: 'r' } }),
      (err: unknown) =>
        err instanceof SandboxError && err.reason === 'permission' && err.message === `.preview/main.ts tried to use ${permission} r`,
      permission,
    );
  }
  for (const error of forged) {
    assert.throws(
      () => answer({ ok: false, error }),
      (err: unknown) =>
        err instanceof SandboxError && err.reason === 'bad-output' && /a failure the operator does not take/.test(err.message),
      JSON.stringify(error),
    );
  }
});

test("the harness's own failures are described", () => {
  assert.throws(
    () =>
      answer({
        ok: false,
        error: {
          kind: 'permission',
          message: 'denied',
          permission: 'FileSystemRead',
          resource: '/etc/passwd',
          location: '.preview/main.ts:3:5',
        },
      }),
    (err: unknown) =>
      err instanceof SandboxError &&
      err.reason === 'permission' &&
      err.message === '.preview/main.ts tried to read /etc/passwd; it may read only files of the repository (at .preview/main.ts:3:5)',
  );
  assert.throws(
    () => answer({ ok: false, error: { kind: 'exception', message: 'TypeError: x is not a function' } }),
    (err: unknown) =>
      err instanceof SandboxError && err.reason === 'exception' && /threw TypeError: x is not a function$/.test(err.message),
  );
});
