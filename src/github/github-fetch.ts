// The fetch every GitHub request goes through, the REST calls and the App's token exchange alike.
// Without a proxy: node:http(s) (http-fetch.ts, cheaper in CPU than the global fetch). With
// one in the environment: undici's fetch over an EnvHttpProxyAgent — HTTPS_PROXY / HTTP_PROXY (or
// lower case), with NO_PROXY's hosts, domains and ports going direct, as git (which honours the
// same variables) does. Node's own env-proxy support is process-wide, switched on at start by
// NODE_USE_ENV_PROXY, and would send the API server and Prometheus calls there too. The undici
// package is imported on the first proxied request only: loading it costs a process ~4 MB of
// resident memory that an operator without a proxy never needs.
import type { EnvHttpProxyAgent, fetch as undiciFetch } from 'undici';
import { httpFetch } from './http-fetch.js';

type Env = Readonly<Record<string, string | undefined>>;
type UndiciFetch = typeof undiciFetch;

const first = (env: Env, ...names: string[]) => names.map((name) => env[name]).find((value) => value !== undefined && value !== '');

/** The fetch for GitHub's requests under `env`'s proxy settings. */
export function githubFetch(env: Env): typeof fetch {
  const httpsProxy = first(env, 'HTTPS_PROXY', 'https_proxy');
  const httpProxy = first(env, 'HTTP_PROXY', 'http_proxy');
  // Octokit reads only the members of a Response that httpFetch answers with.
  if (!httpsProxy && !httpProxy) return httpFetch as unknown as typeof fetch;
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
