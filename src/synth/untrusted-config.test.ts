import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { PreviewConfig } from '../../constructs/index.js';
import { imageRepository, mergeUntrustedConfig } from './untrusted-config.js';

const base: PreviewConfig = {
  version: 1,
  resources: { cpu: '4' },
  algorithms: [
    { name: 'api', image: 'registry.example.com:5000/team/api:1.0' },
    { name: 'worker', image: 'team/worker:1.0' },
  ],
  databases: [{ name: 'db', engine: 'postgresql', version: '16', storage: '1Gi' }],
};

describe('configuration of untrusted pull requests', () => {
  it('parses image repositories with registry ports, tags and digests', () => {
    assert.equal(imageRepository('registry.example.com:5000/team/api:1.0'), 'registry.example.com:5000/team/api');
    assert.equal(imageRepository('registry.example.com:5000/team/api'), 'registry.example.com:5000/team/api');
    assert.equal(imageRepository('team/api@sha256:abc'), 'team/api');
    assert.equal(imageRepository('team/api:2@sha256:abc'), 'team/api');
  });

  it("takes only image tags within the same image repository; everything else stays the base branch's", () => {
    const proposed: PreviewConfig = {
      version: 1,
      resources: { cpu: '64' },
      algorithms: [
        { name: 'api', image: 'registry.example.com:5000/team/api:pr-7', replicas: 20 },
        { name: 'worker', image: 'evil.example.com/miner:latest' },
        { name: 'extra', image: 'team/extra:1' },
      ],
    };
    const merged = mergeUntrustedConfig(base, proposed);
    assert.deepEqual(merged.config, {
      ...base,
      algorithms: [
        { name: 'api', image: 'registry.example.com:5000/team/api:pr-7' },
        { name: 'worker', image: 'team/worker:1.0' },
      ],
    });
    assert.deepEqual(merged.taken, ['algorithms[api].image: registry.example.com:5000/team/api:pr-7']);
    assert.deepEqual(merged.ignored.sort(), [
      'algorithms[api]: only the image tag of an untrusted pull request is applied',
      'algorithms[extra]: not declared on the base branch',
      'algorithms[worker].image: evil.example.com/miner:latest is another image than team/worker',
      'databases: changes from untrusted pull requests are not applied',
      'resources: changes from untrusted pull requests are not applied',
    ]);
  });

  it('without a proposal, or with an identical one, the base applies unchanged', () => {
    assert.deepEqual(mergeUntrustedConfig(base, undefined), { config: base, taken: [], ignored: [] });
    assert.deepEqual(mergeUntrustedConfig(base, structuredClone(base)), { config: base, taken: [], ignored: [] });
  });
});
