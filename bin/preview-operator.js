#!/usr/bin/env node
// `preview-operator` in a clone (`npx preview-operator <command>`): the compiled operator when
// `npm run build` made one, else the TypeScript sources through tsx (a dev dependency, so after
// `npm ci`). The image does not come through here: it runs dist/src/main.js itself.
import { existsSync } from 'node:fs';

const built = new URL('../dist/src/main.js', import.meta.url);
if (existsSync(built)) {
  await import(built.href);
} else {
  const tsx = await import('tsx/esm/api').catch(() => undefined);
  if (!tsx) {
    process.stderr.write('preview-operator: no build in dist/ and no tsx to run the sources: `npm ci`, or `npm run build`\n');
    process.exit(2);
  }
  tsx.register();
  await import(new URL('../src/main.ts', import.meta.url).href);
}
