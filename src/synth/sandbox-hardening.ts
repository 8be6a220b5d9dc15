// Evaluated inside the sandboxed process before any repository code (it is the bundle's first
// module). It reads the operator's request from stdin, keeps the run's nonce where the
// repository's code cannot reach it, answers on fd 3 (the result channel; stdout and stderr are
// only logs), and hides what the permission model leaves open: fetch, process.kill and forbidden
// built-ins through process.getBuiltinModule. None of this is the boundary — the kernel is
// (sandbox-isolation.ts); it turns what would be a kernel refusal into a clear message.
import { createWriteStream, readFileSync } from 'node:fs';
import { builtinName, isAllowedBuiltin } from './sandbox-builtins.js';

/** An error shaped like the permission model's own, so one code path reports both. */
export function accessDenied(permission: string, resource: string): Error {
  return Object.assign(new Error(`Access to this API has been restricted`), { code: 'ERR_ACCESS_DENIED', permission, resource });
}

/** What the operator sends on stdin: the run's nonce and the chart factory's input. */
export interface SandboxRequestDocument {
  nonce: string;
  input: unknown;
}

const request = JSON.parse(readFileSync(0, 'utf8')) as SandboxRequestDocument;
const nonce = request.nonce;

/** The input the operator sent, read before the repository's code runs. */
export const sandboxInput: unknown = request.input;

const resultChannel = createWriteStream('', { fd: 3 });

/** Writes the one result document, after the run's nonce, to the result channel, then ends the process. */
export function sendResult(document: string): void {
  resultChannel.end(`${nonce}\n${document}`, () => process.exit(0));
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
