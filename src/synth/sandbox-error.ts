// Why a repository's `.preview/main.ts` produced no manifests. The message is written for the
// PR author (it ends up in the PR comment and a status condition): what went wrong, where in
// their code when known, and never anything of the operator's environment.

export type SandboxFailureReason =
  /** The code could not be compiled or bundled: syntax error, missing file, unresolvable import. */
  | 'compile'
  /** Ran longer than the time limit and was killed. */
  | 'timeout'
  /** Exceeded the heap limit or the memory (RSS) limit. */
  | 'memory'
  /** Tried something the sandbox forbids: a file outside the checkout, a process, a worker, the network, a forbidden module. */
  | 'permission'
  /** Threw (or rejected) an error of its own. */
  | 'exception'
  /** Finished without valid manifests: wrong default export, output too large, not manifests, exited early. */
  | 'bad-output'
  /** Not run at all: the kernel isolation the sandbox needs is not available where the operator runs. */
  | 'isolation';

export class SandboxError extends Error {
  override readonly name = 'SandboxError';
  constructor(
    readonly reason: SandboxFailureReason,
    message: string,
    /** The tail of what the code printed (console output, Node's own messages), for logs. */
    readonly logs = '',
  ) {
    super(message);
  }
}
