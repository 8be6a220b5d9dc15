import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import {
  formatPreviewConfigErrors,
  validatePreviewConfig,
  validatePreviewConfigValue,
  type PreviewConfigError,
} from './preview-config-validation.js';

const example = readFileSync(new URL('../../examples/repository/.preview/preview.yaml', import.meta.url), 'utf8');

function errorsOf(text: string): PreviewConfigError[] {
  const result = validatePreviewConfig(text);
  assert.equal(result.ok, false, 'expected the configuration to be rejected');
  return result.ok ? [] : result.errors;
}

describe('validatePreviewConfig', () => {
  it('parses a valid text once while it is recent, and shares the configuration frozen, so no caller can change it for another', () => {
    const text = `${example}\n# this test's own text\n`;
    const first = validatePreviewConfig(text);
    assert.ok(first.ok);
    assert.equal(validatePreviewConfig(text), first, 'the same text: the kept result');
    assert.throws(() => (first.config.algorithms as unknown[]).push({}), TypeError);
    assert.throws(() => Object.assign(first.config, { hostPrefix: 'another' }), TypeError);
    assert.equal(first.config.hostPrefix, 'reco');
    const refused = 'version: 1\nunknownField: 2\n';
    assert.notEqual(validatePreviewConfig(refused), validatePreviewConfig(refused), 'a refusal is not kept (its errors can be many)');
    for (let i = 0; i < 40; i++) validatePreviewConfig(`version: 1\n# other text ${i}\n`);
    const again = validatePreviewConfig(text);
    assert.notEqual(again, first, 'forgotten after 32 other texts: the memory stays bounded');
    assert.deepEqual(again, first);
    const large = `${example}${'#'.repeat(20 * 1024)}\n`;
    assert.notEqual(validatePreviewConfig(large), validatePreviewConfig(large), 'a text over 16 KiB is not held');
    assert.ok(Object.isFrozen(validatePreviewConfig(large)), 'but frozen like every valid configuration');
  });

  it('accepts the documented example and returns it typed', () => {
    const result = validatePreviewConfig(example);
    assert.ok(result.ok, result.ok ? '' : formatPreviewConfigErrors(result.errors));
    assert.equal(result.config.hostPrefix, 'reco');
    assert.deepEqual(
      result.config.algorithms?.map((a) => a.name),
      ['recommendation-engine', 'ranking-api'],
    );
    assert.equal(result.config.databases?.[0]?.version, '16');
  });

  it('accepts a minimal file', () => {
    assert.deepEqual(validatePreviewConfig('version: 1\n'), { ok: true, config: { version: 1 } });
  });

  it('reports every error with its path, its line and column, in reading order', () => {
    const text = [
      'version: 2', // 1
      'hostPrefix: Reco', // 2
      'ttl: forever', // 3
      'env:', // 4
      '  1BAD: x', // 5
      '  PORT: 8080', // 6
      'algorithms:', // 7
      '  - name: reco', // 8
      '    imag: registry.example/reco:1', // 9
      '    replicas: 3', // 10
      '    scaling: { minReplicas: 5, maxReplicas: 2 }', // 11
      '    lifecycle: { canaryWeight: 150, successThreshold: 2 }', // 12
      'databases:', // 13
      '  - name: db', // 14
      '    engine: oracle', // 15
      '    version: 16', // 16
      '    storage: lots', // 17
      '    replicas: 6', // 18
      'colour: blue', // 19
      '',
    ].join('\n');
    assert.deepEqual(
      errorsOf(text).map((e) => `${e.line}:${e.column} ${e.path}: ${e.message}`),
      [
        '1:10 /version: must be 1',
        '2:13 /hostPrefix: must be a DNS label: lower-case letters, digits and "-", at most 40 characters',
        '3:6 /ttl: must be a duration such as 72h, 90m or 1h30m',
        '5:9 /env/1BAD: the name must be an environment variable name: letters, digits and "_", not starting with a digit',
        '6:9 /env/PORT: must be a string',
        '8:5 /algorithms/0/image: is required',
        '9:11 /algorithms/0/imag: is not a known field (did you mean "image"?); known fields: name, image, replicas, resources, scaling, lifecycle, env, expose, path',
        '11:29 /algorithms/0/scaling/minReplicas: (5) must be less than or equal to maxReplicas (2)',
        '12:32 /algorithms/0/lifecycle/canaryWeight: must be <= 100',
        '12:55 /algorithms/0/lifecycle/successThreshold: must be <= 1',
        '15:13 /databases/0/engine: must be one of: postgresql, mysql',
        '16:14 /databases/0/version: must be a string',
        '17:14 /databases/0/storage: must be a Kubernetes quantity such as 500m, 2, 512Mi or 10Gi',
        '18:15 /databases/0/replicas: must be <= 5',
        '19:9 /colour: is not a known field; known fields: version, hostPrefix, ttl, env, resources, algorithms, databases',
      ],
    );
  });

  it('reports names that would collide, paths routed twice and a GPU budget too small', () => {
    const text = `
resources: { gpu: 2 }
algorithms:
  - { name: api, image: "api:1", resources: { gpuCount: 2 }, replicas: 2 }
  - { name: api-canary, image: "api:2" }
  - { name: worker, image: "w:1", path: /api }
databases:
  - { name: api, engine: postgresql, version: "16", storage: 1Gi }
`;
    const errors = errorsOf(text).map((e) => `${e.path}: ${e.message}`);
    assert.deepEqual(errors, [
      "/resources/gpu: (2) is less than the 4 GPUs the algorithms' replicas request",
      '/algorithms/1/path: "/" is already routed to /algorithms/0; give each exposed algorithm its own path (or expose: false)',
      '/algorithms/1/name: would create Deployment "api-canary", which /algorithms/0 (api) creates too',
      '/databases/0/name: would create Service "api", which /algorithms/0 (api) creates too',
    ]);
  });

  it('reports replicas outside the autoscaling bounds', () => {
    const errors = errorsOf('algorithms:\n  - name: a\n    image: a:1\n    replicas: 12\n    scaling: { maxReplicas: 10 }\n');
    assert.deepEqual(
      errors.map((e) => `${e.line}:${e.column} ${e.path}: ${e.message}`),
      ['4:15 /algorithms/0/replicas: (12) must lie within scaling.minReplicas..maxReplicas (1..10)'],
    );
  });

  it('reports YAML syntax errors with their position', () => {
    const errors = errorsOf('algorithms:\n  - name: a\n   image: b\n');
    assert.ok(errors.length >= 1);
    for (const error of errors) {
      assert.equal(error.path, '');
      assert.match(error.message, /^YAML syntax: /);
      assert.equal(typeof error.line, 'number');
      assert.equal(typeof error.column, 'number');
    }
    assert.equal(errors[0]!.line, 3);
    assert.match(errorsOf('a: 1\na: 2\n')[0]!.message, /Map keys must be unique/);
  });

  it('rejects an empty file, a list, and several documents', () => {
    assert.deepEqual(errorsOf(''), [{ path: '', message: 'the file is empty; it must be a mapping (at least `version: 1`)' }]);
    assert.deepEqual(
      errorsOf('- a\n- b\n').map((e) => `${e.path}: ${e.message}`),
      [': must be a mapping'],
    );
    assert.match(errorsOf('version: 1\n---\nversion: 1\n')[0]!.message, /YAML syntax: .*multiple documents/i);
  });

  it('does not expand an alias bomb', () => {
    const bomb = [
      'a: &a [x, x, x, x, x, x, x, x, x, x]',
      ...'bcdefgh'.split('').map((k, i) => `${k}: &${k} [${Array(10).fill(`*${'abcdefgh'[i]}`).join(', ')}]`),
    ].join('\n');
    const errors = errorsOf(bomb);
    assert.equal(errors.length, 1);
    assert.match(errors[0]!.message, /^YAML: .*alias/i);
  });

  it('formats errors one per line for conditions and PR comments', () => {
    const text = 'algorithms:\n  - name: a\n';
    const result = validatePreviewConfig(text);
    assert.ok(!result.ok);
    assert.equal(formatPreviewConfigErrors(result.errors), '.preview/preview.yaml:2:5 /algorithms/0/image: is required');
    assert.equal(formatPreviewConfigErrors([{ path: '', message: 'x' }], 'p.yaml'), 'p.yaml (document): x');
  });
});

describe('validatePreviewConfigValue', () => {
  it('validates an assembled configuration without positions', () => {
    assert.deepEqual(validatePreviewConfigValue({ algorithms: [{ name: 'a', image: 'a:1', replicas: -1 }] }), {
      ok: false,
      errors: [{ path: '/algorithms/0/replicas', message: 'must be >= 0' }],
    });
    assert.equal(validatePreviewConfigValue({ algorithms: [{ name: 'a', image: 'a:1' }] }).ok, true);
  });
});
