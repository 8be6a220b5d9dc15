// Evaluated inside the sandboxed process before any repository code (it is the bundle's first
// module). It takes the process's stdout for the result protocol, sends everything the code
// prints to stderr, reads the input, and closes the doors Node 20's permission model leaves open:
// the network (fetch), signals to other processes (process.kill, e.g. of the operator), and
// loading forbidden built-ins through process.getBuiltinModule.
import { readFileSync } from 'node:fs';
import { builtinName, isAllowedBuiltin } from './sandbox-builtins.js';

/** An error shaped like the permission model's own, so one code path reports both. */
export function accessDenied(permission: string, resource: string): Error {
  return Object.assign(new Error(`Access to this API has been restricted`), { code: 'ERR_ACCESS_DENIED', permission, resource });
}

const protocolWrite = process.stdout.write.bind(process.stdout);
// console.* and process.stdout.write from the repository's code become logs.
process.stdout.write = process.stderr.write.bind(process.stderr) as typeof process.stdout.write;

/** The input the operator sent on stdin (one JSON document), read before the repository's code runs. */
export const sandboxInput: unknown = JSON.parse(readFileSync(0, 'utf8'));

/** Writes the one result document to the real stdout, then ends the process. */
export function sendResult(document: string): void {
  protocolWrite(`${document}\n`, () => process.exit(0));
}

const denyNetwork = (): never => {
  throw accessDenied('Network', 'fetch');
};
for (const name of ['fetch', 'WebSocket', 'EventSource'] as const) {
  if (name in globalThis) Object.defineProperty(globalThis, name, { value: denyNetwork, writable: false, configurable: false });
}

Object.defineProperty(process, 'kill', {
  value: (pid: number) => {
    throw accessDenied('Signal', `process ${pid}`);
  },
  writable: false,
  configurable: false,
});

const getBuiltinModule = (process as { getBuiltinModule?: (id: string) => unknown }).getBuiltinModule?.bind(process);
if (getBuiltinModule) {
  Object.defineProperty(process, 'getBuiltinModule', {
    value: (id: string) => {
      if (!isAllowedBuiltin(id)) throw accessDenied('Module', `node:${builtinName(id)}`);
      return getBuiltinModule(id);
    },
    writable: false,
    configurable: false,
  });
}
