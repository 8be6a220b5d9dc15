import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import {
  ConflictError,
  ExpiredError,
  ForbiddenError,
  InvalidError,
  KubeError,
  NotFoundError,
  TransientError,
  errorFromResponse,
  isTransient,
  toKubeError,
} from './errors.js';

const status = (code: number, reason: string, extra: object = {}) =>
  JSON.stringify({ kind: 'Status', apiVersion: 'v1', status: 'Failure', message: `${reason} happened`, reason, code, ...extra });

describe('errors', () => {
  it("maps each status to its class, keeping the server's reason and message", () => {
    const cases: [number, string, new (...a: never[]) => KubeError][] = [
      [404, 'NotFound', NotFoundError],
      [409, 'Conflict', ConflictError],
      [409, 'AlreadyExists', ConflictError],
      [403, 'Forbidden', ForbiddenError],
      [401, 'Unauthorized', ForbiddenError],
      [422, 'Invalid', InvalidError],
      [400, 'BadRequest', InvalidError],
      [410, 'Expired', ExpiredError],
      [429, 'TooManyRequests', TransientError],
      [500, 'InternalError', TransientError],
      [503, 'ServiceUnavailable', TransientError],
      [504, 'Timeout', TransientError],
    ];
    for (const [code, reason, cls] of cases) {
      const err = errorFromResponse(code, status(code, reason), 'GET /x');
      assert.ok(err instanceof cls, `${code} ${reason} → ${err.name}`);
      assert.equal(err.reason, reason);
      assert.equal(err.statusCode, code);
      assert.match(err.message, new RegExp(`GET /x: ${reason} happened \\(${code}\\)`));
    }
    assert.equal((errorFromResponse(409, status(409, 'AlreadyExists')) as ConflictError).alreadyExists, true);
    assert.equal(errorFromResponse(405, 'nope').constructor, KubeError);
  });

  it('carries the causes of an invalid object and the retry-after of a throttled request', () => {
    const invalid = errorFromResponse(
      422,
      status(422, 'Invalid', { details: { causes: [{ reason: 'FieldValueInvalid', message: 'must be >= 0', field: 'spec.replicas' }] } }),
    );
    assert.ok(invalid instanceof InvalidError);
    assert.deepEqual(invalid.causes, [{ reason: 'FieldValueInvalid', message: 'must be >= 0', field: 'spec.replicas' }]);
    const throttled = errorFromResponse(429, status(429, 'TooManyRequests', { details: { retryAfterSeconds: 3 } }));
    assert.equal((throttled as TransientError).retryAfterMs, 3000);
  });

  it('maps client-node ApiException shapes, status-coded errors and network errors', () => {
    const apiException = Object.assign(new Error('HTTP-Code: 404'), { code: 404, body: status(404, 'NotFound'), headers: {} });
    assert.ok(toKubeError(apiException) instanceof NotFoundError);
    assert.ok(toKubeError(Object.assign(new Error('Gone'), { statusCode: 410 })) instanceof ExpiredError);
    const refused = toKubeError(Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' }));
    assert.ok(refused instanceof TransientError);
    assert.equal(refused.reason, 'ECONNREFUSED');
    assert.equal(isTransient(Object.assign(new Error('x'), { code: 'ECONNRESET' })), true);
    assert.equal(isTransient(new Error('bug')), false);
    const same = new NotFoundError('x', 404, 'NotFound');
    assert.equal(toKubeError(same), same);
    assert.ok(toKubeError('a string') instanceof KubeError);
  });

  it('keeps a non-JSON body as the message', () => {
    const err = errorFromResponse(502, '<html>bad gateway</html>');
    assert.ok(err instanceof TransientError);
    assert.match(err.message, /bad gateway/);
  });
});
