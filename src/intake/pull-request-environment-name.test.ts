import { test } from 'node:test';
import assert from 'node:assert/strict';
import { environmentName } from './pull-request-environment-name.js';

const dns1123Label = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;

test('pr-<number>-<repository>-<hash>, the same every time', () => {
  const name = environmentName({ owner: 'acme', name: 'shop' }, 42);
  assert.match(name, /^pr-42-shop-[0-9a-f]{8}$/);
  assert.equal(name, 'pr-42-shop-d21b2cdf', 'the name of an environment that exists never changes with a new operator version');
  assert.equal(environmentName({ owner: 'acme', name: 'shop' }, 42), name);
  assert.equal(environmentName({ owner: 'ACME', name: 'Shop' }, 42), name, 'GitHub names are case-insensitive');
});

test('the same repository name under two owners gives two names', () => {
  assert.notEqual(environmentName({ owner: 'acme', name: 'shop' }, 1), environmentName({ owner: 'other', name: 'shop' }, 1));
});

test('names that shorten alike still differ; every name is a DNS-1123 label of at most 63 characters', () => {
  const long = 'a-very-long-repository-name-that-goes-on-and-on-and-on-forever';
  const a = environmentName({ owner: 'acme', name: `${long}-one` }, 123456789);
  const b = environmentName({ owner: 'acme', name: `${long}-two` }, 123456789);
  assert.notEqual(a, b);
  for (const name of [
    a,
    b,
    environmentName({ owner: 'x', name: 'My_Repo.js' }, 1),
    environmentName({ owner: 'x', name: '...' }, 1),
    environmentName({ owner: 'x', name: '-_-' }, Number.MAX_SAFE_INTEGER),
    environmentName({ owner: 'x', name: 'a'.repeat(100) }, Number.MAX_SAFE_INTEGER),
  ]) {
    assert.ok(name.length <= 63, name);
    assert.match(name, dns1123Label, name);
  }
  assert.match(environmentName({ owner: 'x', name: 'My_Repo.js' }, 1), /^pr-1-my-repo-js-[0-9a-f]{8}$/);
  assert.match(environmentName({ owner: 'x', name: '...' }, 1), /^pr-1-[0-9a-f]{8}$/);
});

test('an invalid pull request number is refused', () => {
  assert.throws(() => environmentName({ owner: 'a', name: 'b' }, 0), RangeError);
  assert.throws(() => environmentName({ owner: 'a', name: 'b' }, 1.5), RangeError);
});
