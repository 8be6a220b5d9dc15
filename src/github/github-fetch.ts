// The fetch every GitHub request goes through. Octokit 22 calls the global fetch, which ignores
// HTTPS_PROXY (Node's own env-proxy support is process-wide, switched on at start by
// NODE_USE_ENV_PROXY, and would send the API server and Prometheus calls there too). With a proxy
// in the environment, GitHub's requests — the REST calls and the App's token exchange alike — use
// undici's fetch over an EnvHttpProxyAgent: HTTPS_PROXY / HTTP_PROXY (or lower case), with
// NO_PROXY's hosts, domains and ports going direct, as git (which honours the same variables) does.
// The undici package is imported on the first proxied request only: loading it costs a process
// ~15 MB of resident memory that an operator without a proxy never needs.
import type { EnvHttpProxyAgent, fetch as undiciFetch } from 'undici';

type Env = Readonly<Record<string, string | undefined>>;
type UndiciFetch = typeof undiciFetch;

const first = (env: Env, ...names: string[]) => names.map((name) => env[name]).find((value) => value !== undefined && value !== '');

/** The fetch for GitHub's requests under `env`'s proxy settings; undefined (the global fetch) without a proxy. */
export function githubFetch(env: Env): typeof fetch | undefined {
  const httpsProxy = first(env, 'HTTPS_PROXY', 'https_proxy');
  const httpProxy = first(env, 'HTTP_PROXY', 'http_proxy');
  if (!httpsProxy && !httpProxy) return undefined;
  const noProxy = first(env, 'NO_PROXY', 'no_proxy') ?? '';
  let proxied: Promise<{ dispatcher: EnvHttpProxyAgent; fetch: UndiciFetch }> | undefined;
  const load = () =>
    (proxied ??= import('undici').then((undici) => ({
      dispatcher: new undici.EnvHttpProxyAgent({ httpProxy, httpsProxy, noProxy }),
      fetch: undici.fetch,
    })));
  const viaProxy = async (input: Parameters<UndiciFetch>[0], init?: Parameters<UndiciFetch>[1]) => {
    const { dispatcher, fetch } = await load();
    return fetch(input, { ...init, dispatcher });
  };
  return viaProxy as unknown as typeof fetch;
}
