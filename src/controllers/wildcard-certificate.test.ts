// The check of a wildcard certificate against a preview's host, on a real certificate: a
// self-signed one for `*.preview.test` and `preview.test` (test/fixtures/tls/), and no key — the
// check reads the key's presence only.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { certificateProblem, tlsData } from './wildcard-certificate.js';

const wildcardPem = readFileSync(new URL('../../test/fixtures/tls/wildcard-preview-test.crt', import.meta.url), 'utf8');
const data = { 'tls.crt': Buffer.from(wildcardPem.trim()).toString('base64'), 'tls.key': Buffer.from('key').toString('base64') };
const valid = new Date('2027-06-01T00:00:00Z');

describe('a wildcard certificate serves a preview host', () => {
  it('one label under its domain, while it is valid', () => {
    assert.equal(certificateProblem(data, 'shop-pr-7.preview.test', valid), undefined);
    assert.equal(certificateProblem(data, 'preview.test', valid), undefined);
  });

  it('not two labels under it, nor another domain', () => {
    assert.match(
      certificateProblem(data, 'api.shop-pr-7.preview.test', valid)!,
      /is for DNS:\*\.preview\.test, DNS:preview\.test, which does not cover api\.shop-pr-7/,
    );
    assert.match(certificateProblem(data, 'shop-pr-7.preview.example', valid)!, /does not cover shop-pr-7\.preview\.example/);
  });

  it('not before it is valid, nor once it expired', () => {
    assert.match(
      certificateProblem(data, 'shop-pr-7.preview.test', new Date('2026-01-01T00:00:00Z'))!,
      /^its certificate is not valid before Dec +1 /,
    );
    assert.match(
      certificateProblem(data, 'shop-pr-7.preview.test', new Date('2127-01-01T00:00:00Z'))!,
      /^its certificate expired on Nov +7 .*2126/,
    );
  });

  it('a Secret without a certificate and its key, or with something else in tls.crt, serves nothing', () => {
    assert.equal(
      certificateProblem({ 'tls.crt': data['tls.crt'] }, 'shop-pr-7.preview.test', valid),
      'holds no certificate and key (tls.crt, tls.key)',
    );
    assert.equal(certificateProblem(undefined, 'shop-pr-7.preview.test', valid), 'holds no certificate and key (tls.crt, tls.key)');
    const garbage = { ...data, 'tls.crt': Buffer.from('not a certificate').toString('base64') };
    assert.equal(certificateProblem(garbage, 'shop-pr-7.preview.test', valid), 'tls.crt is not a PEM certificate');
  });

  it('what is copied: the certificate, its key and the CA when there is one, nothing else', () => {
    assert.deepEqual(tlsData({ ...data, 'ca.crt': 'Y2E=', extra: 'eA==' }), { ...data, 'ca.crt': 'Y2E=' });
    assert.deepEqual(tlsData(data), data);
    assert.equal(tlsData({ 'tls.key': 'a2V5' }), undefined);
  });
});
