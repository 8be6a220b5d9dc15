// `npx cdk8s synth` (cdk8s.yaml → examples/synth.ts) renders the example preview, and what it
// prints is exactly what the library renders in memory.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import path from 'node:path';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { Yaml } from 'cdk8s';
import { renderExamplePreview } from '../../examples/example-preview.js';

const root = fileURLToPath(new URL('../../', import.meta.url));

describe('npx cdk8s synth', () => {
  it('prints the example preview', async () => {
    const cli = path.join(root, 'node_modules', '.bin', 'cdk8s');
    const { stdout } = await promisify(execFile)(cli, ['--no-check-upgrade', 'synth', '--stdout'], { cwd: root, timeout: 180_000 });
    assert.equal(stdout.trim(), Yaml.stringify(...renderExamplePreview()).trim());
    assert.match(stdout, /^kind: Ingress$/m);
  });
});
