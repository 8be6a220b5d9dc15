import { test } from 'node:test';
import assert from 'node:assert/strict';
import { signBody } from '../../test/github-emulator/webhook-delivery.js';
import { signatureMatches } from './webhook-signature.js';

const body = Buffer.from('{"zen":"Keep it logically awesome."}');

test("GitHub's X-Hub-Signature-256 of the exact bytes verifies", () => {
  assert.equal(signatureMatches(['s3cret'], body, signBody('s3cret', body).sha256), true);
  assert.equal(
    signatureMatches(['s3cret'], body, signBody('s3cret', body).sha256.toUpperCase().replace('SHA256=', 'sha256=')),
    true,
    'hex case does not matter',
  );
});

test('another secret, another body, a truncated, missing or sha1 signature do not', () => {
  const good = signBody('s3cret', body).sha256;
  assert.equal(signatureMatches(['other'], body, good), false);
  assert.equal(signatureMatches(['s3cret'], Buffer.concat([body, Buffer.from(' ')]), good), false);
  assert.equal(signatureMatches(['s3cret'], body, good.slice(0, -2)), false);
  assert.equal(signatureMatches(['s3cret'], body, undefined), false);
  assert.equal(signatureMatches(['s3cret'], body, ''), false);
  assert.equal(signatureMatches(['s3cret'], body, signBody('s3cret', body).sha1), false);
  assert.equal(signatureMatches(['s3cret'], body, good.replace('sha256=', 'sha512=')), false);
});

test('during a rotation either secret verifies', () => {
  assert.equal(signatureMatches(['new', 'old'], body, signBody('old', body).sha256), true);
  assert.equal(signatureMatches(['new', 'old'], body, signBody('new', body).sha256), true);
  assert.equal(signatureMatches(['new', 'old'], body, signBody('older', body).sha256), false);
});

test('bytes that are not valid UTF-8 are verified as sent', () => {
  const raw = Buffer.from([0x7b, 0xff, 0xfe, 0x7d]);
  assert.equal(signatureMatches(['k'], raw, signBody('k', raw).sha256), true);
});
