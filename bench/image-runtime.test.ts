import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { imageRuntime, parseImageRuntime } from './image-runtime.js';

test("the bench runs the operator with the final stage's ENV and the ENTRYPOINT's node flags", () => {
  const dockerfile = `FROM node:22 AS build\nENV BUILD_ONLY=1\nRUN npm ci\nFROM node:22-slim\nENV NODE_ENV=production MALLOC_ARENA_MAX=2
    USER 1000:1000\nENTRYPOINT ["node", "--enable-source-maps", "--max-semi-space-size=8", "dist/src/main.js"]\nCMD ["run"]`;
  const runtime = parseImageRuntime(dockerfile);
  assert.deepEqual(runtime.env, { NODE_ENV: 'production', MALLOC_ARENA_MAX: '2' });
  assert.deepEqual(runtime.nodeFlags, ['--enable-source-maps', '--max-semi-space-size=8']);
  assert.throws(() => parseImageRuntime('FROM scratch\nENTRYPOINT ["/bin/operator"]\n'), /does not start node/);
  const withInit = parseImageRuntime(
    'FROM node:24-slim\nENTRYPOINT ["/usr/bin/tini", "--", "node", "--disable-sigusr1", "dist/src/main.js"]\n',
  );
  assert.deepEqual(withInit.nodeFlags, ['--disable-sigusr1'], "the flags after node, not the init's");
});

test("the repository's Dockerfile gives the production runtime", () => {
  const runtime = imageRuntime(fileURLToPath(new URL('..', import.meta.url)));
  assert.equal(runtime.env.NODE_ENV, 'production');
  assert.ok(!runtime.nodeFlags.includes('--enable-source-maps'), "node_modules' source maps stay unread (own-source-maps.ts)");
  assert.ok(runtime.nodeFlags.includes('--disable-sigusr1'), "no signal opens the operator's inspector");
  const dockerfile = readFileSync(new URL('../Dockerfile', import.meta.url), 'utf8');
  assert.match(dockerfile, /^ENTRYPOINT \["\/usr\/bin\/tini", "--", "node",/m, 'tini is PID 1: it reaps orphans');
  assert.match(dockerfile, /apt-get install .*\btini\b/, "Debian's tini package");
});

test('the tests run on the Node major the image ships', () => {
  const dockerfile = readFileSync(new URL('../Dockerfile', import.meta.url), 'utf8');
  const shipped = /^ARG NODE_IMAGE=node:(\d+)-slim$/m.exec(dockerfile)?.[1];
  assert.equal(shipped, process.versions.node.split('.')[0], `the image ships node:${shipped}, the tests run on ${process.version}`);
});
