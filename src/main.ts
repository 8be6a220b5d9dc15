#!/usr/bin/env node
// The preview-operator executable.
import './own-source-maps.js';

const { runCli } = await import('./cli.js');
const code = await runCli(process.argv.slice(2), process.env);
// Informer watches and keep-alive sockets would hold the event loop open after a stop.
process.exit(code);
