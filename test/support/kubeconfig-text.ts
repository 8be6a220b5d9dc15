// Kubeconfigs for the loader's and the client's tests: one cluster, one user, one context.
import type https from 'node:https';

export interface KubeconfigNames {
  /** Default `c`. */
  cluster?: string;
  /** Default `u`. */
  user?: string;
  /** The context, also the current one (default `ctx`). */
  context?: string;
}

/** `lines` indented by `spaces`, every line. */
export function indented(lines: string, spaces: number): string {
  return lines
    .split('\n')
    .map((l) => `${' '.repeat(spaces)}${l}`)
    .join('\n');
}

/** A kubeconfig joining `cluster` and `user` (YAML fragments, unindented) in its current context; `extra` follows as is. */
export function kubeconfigText(cluster: string, user: string, names: KubeconfigNames = {}, extra = ''): string {
  const { cluster: c = 'c', user: u = 'u', context = 'ctx' } = names;
  return `apiVersion: v1
kind: Config
current-context: ${context}
clusters:
- name: ${c}
  cluster:
${indented(cluster, 4)}
users:
- name: ${u}
  user:
${indented(user, 4)}
contexts:
- name: ${context}
  context: {cluster: ${c}, user: ${u}}
${extra}`;
}

/** What a loaded kubeconfig puts on a request's options, applied to empty ones as the client does. */
export async function appliedOptions(kc: { applyToHTTPSOptions(o: https.RequestOptions): Promise<void> }): Promise<https.RequestOptions> {
  const options: https.RequestOptions = { headers: {} };
  await kc.applyToHTTPSOptions(options);
  return options;
}
