/**
 * A kubeconfig the operator cannot use: unreadable, malformed, naming something it does not
 * define, or asking for a feature the operator does not support. The message names the file,
 * the entry and the field, so whoever wrote the kubeconfig can fix it without reading code.
 */
export class KubeConfigError extends Error {
  /** A failure that may pass by itself (a credential plugin that timed out or failed): worth a retry. */
  readonly transient: boolean;

  constructor(message: string, options?: { cause?: unknown; transient?: boolean }) {
    super(message, options);
    this.name = 'KubeConfigError';
    this.transient = options?.transient ?? false;
  }
}
