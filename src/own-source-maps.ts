// Stack traces that name the operator's TypeScript lines: the source maps of its own files only.
// `--enable-source-maps` also reads node_modules' inline maps, and keeps them in the heap for good
// (3.5 MB, cdk8s-plus's alone 2.7 MB). A module's map is read as the module loads, so whatever
// imports this first must load the operator after it, with a dynamic import (main.ts).
import { setSourceMapsSupport } from 'node:module';

setSourceMapsSupport(true, { nodeModules: false, generatedCode: false });
