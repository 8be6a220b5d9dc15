// Reads the sandboxed process's answer: the result channel's bytes must start with the run's
// nonce (so what the code writes to fd 1 or 2 is a log, never an answer), be one JSON document
// within the output limits (depth, count and size are checked before anything clones or walks it
// recursively), and hold manifests — or the child's own account of why there are none.
import type { Manifest } from '../../constructs/index.js';
import { checkOutputShape, type OutputLimits } from './rendered-output-limits.js';
import { SandboxError } from './sandbox-error.js';
import type { SandboxChildError, SandboxResponse } from './sandbox-harness.js';

const permissionWords: Record<string, (resource: string) => string> = {
  FileSystemRead: (r) => `read ${r}; it may read only files of the repository`,
  FileSystemWrite: (r) => `write ${r}; it may not write files`,
  ChildProcess: () => 'start a process; it may not start processes',
  WorkerThreads: () => 'start a worker thread; it may not start threads',
  Inspector: () => 'use the inspector',
  Network: () => 'use the network; it may not',
  Signal: (r) => `send a signal to ${r}; it may not`,
  Module: (r) => `load ${r}, which is not available in the sandbox`,
};

/** How the process ended and where, for the messages. */
export interface ProcessEnd {
  entry: string;
  code: number | null;
  signal: NodeJS.Signals | null;
  /** The run's checkout, stripped from paths in messages. */
  checkoutDir: string;
}

function describeChildError(error: SandboxChildError, end: ProcessEnd): SandboxError {
  const at = error.location ? ` (at ${error.location})` : '';
  if (error.kind === 'permission') {
    const prefix = `${end.checkoutDir}/`;
    const resource = error.resource?.startsWith(prefix) ? error.resource.slice(prefix.length) : (error.resource ?? '');
    const known = error.permission !== undefined && Object.hasOwn(permissionWords, error.permission);
    const words = known ? permissionWords[error.permission!]!(resource) : `use ${error.permission} ${resource}`.trim();
    return new SandboxError('permission', `${end.entry} tried to ${words}${at}`);
  }
  if (error.kind === 'bad-output') return new SandboxError('bad-output', error.message);
  return new SandboxError('exception', `${end.entry} threw ${error.message}${at}`);
}

const childErrorKinds: readonly string[] = ['permission', 'exception', 'bad-output'] satisfies SandboxChildError['kind'][];

/** The child's account of its failure, as the harness writes it: the code may have forged it, in any shape. */
function isChildError(value: unknown): value is SandboxChildError {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  const error = value as Record<string, unknown>;
  const optional = (field: string) => error[field] === undefined || typeof error[field] === 'string';
  return (
    typeof error.kind === 'string' &&
    childErrorKinds.includes(error.kind) &&
    typeof error.message === 'string' &&
    optional('permission') &&
    optional('resource') &&
    optional('location')
  );
}

function isManifest(value: unknown): value is Manifest {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  const object = value as { apiVersion?: unknown; kind?: unknown; metadata?: { name?: unknown } };
  return (
    typeof object.apiVersion === 'string' &&
    typeof object.kind === 'string' &&
    typeof object.metadata === 'object' &&
    object.metadata !== null &&
    typeof object.metadata.name === 'string'
  );
}

/** The manifests of an answer, or the SandboxError that says why there are none. */
export function readAnswer(channel: string, nonce: string, end: ProcessEnd, limits: OutputLimits): Manifest[] {
  const ended = end.signal ? `was killed by ${end.signal}` : `exited with code ${end.code}`;
  if (channel === '') throw new SandboxError('bad-output', `${end.entry} ${ended} before producing manifests`);
  if (!channel.startsWith(`${nonce}\n`)) {
    throw new SandboxError(
      'bad-output',
      `${end.entry} wrote something other than the sandbox's answer to its result channel (it ${ended})`,
    );
  }
  let response: SandboxResponse;
  try {
    response = JSON.parse(channel.slice(nonce.length + 1)) as SandboxResponse;
  } catch {
    throw new SandboxError(
      'bad-output',
      `${end.entry} wrote something other than the sandbox's answer to its result channel (it ${ended})`,
    );
  }
  if (response.ok === false) {
    if (!isChildError(response.error))
      throw new SandboxError('bad-output', `${end.entry} answered with a failure the operator does not take`);
    throw describeChildError(response.error, end);
  }
  if (response.ok !== true || !Array.isArray(response.manifests))
    throw new SandboxError('bad-output', `${end.entry} produced no list of manifests`);
  const shape = checkOutputShape(response.manifests, limits);
  if (shape !== undefined) throw new SandboxError('bad-output', `${end.entry} produced output the operator does not take: ${shape}`);
  const bad = response.manifests.findIndex((m) => !isManifest(m));
  if (bad >= 0)
    throw new SandboxError('bad-output', `object ${bad} of the output is not a Kubernetes object (apiVersion, kind, metadata.name)`);
  return response.manifests as Manifest[];
}
