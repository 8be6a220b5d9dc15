// One instant query against a Prometheus-compatible HTTP API (`GET /api/v1/query`), reduced
// to what a rollout analysis can act on: a number, no samples, or "could not ask". Anything
// but a clean scalar answer is kept apart from "no samples", because no samples is not success
// and an unreachable server must never look like one either.

/** The answer to an instant query. */
export type QueryResult =
  /** One finite value (the first series of a vector, or a scalar). */
  | { kind: 'value'; value: number }
  /** The query matched no series, or the value is NaN/±Inf (e.g. 0/0 with no traffic). */
  | { kind: 'empty' };

/** Prometheus could not be reached or refused the query; `message` says which. */
export class PrometheusUnavailableError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'PrometheusUnavailableError';
  }
}

export interface PrometheusQueryOptions {
  /** Give up after this long (default 10 s). */
  timeoutMs?: number;
  signal?: AbortSignal;
}

interface QueryResponse {
  status?: 'success' | 'error';
  errorType?: string;
  error?: string;
  data?: {
    resultType?: 'vector' | 'scalar' | 'matrix' | 'string';
    result?: unknown;
  };
}

/** Runs `query` at the server's current time; throws `PrometheusUnavailableError` unless answered. */
export async function queryPrometheus(baseUrl: string, query: string, options: PrometheusQueryOptions = {}): Promise<QueryResult> {
  const url = new URL('api/v1/query', baseUrl.endsWith('/') ? baseUrl : `${baseUrl}/`);
  const timeout = AbortSignal.timeout(options.timeoutMs ?? 10_000);
  const signal = options.signal ? AbortSignal.any([options.signal, timeout]) : timeout;
  let response: Response;
  try {
    response = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' },
      body: new URLSearchParams({ query }).toString(),
      signal,
    });
  } catch (err) {
    const cause = (err as { cause?: { code?: string; message?: string } }).cause;
    const detail = cause?.code ?? cause?.message ?? (err instanceof Error ? err.message : String(err));
    throw new PrometheusUnavailableError(`Prometheus at ${baseUrl} is unreachable: ${detail}`, { cause: err });
  }
  const text = await response.text().catch(() => '');
  let body: QueryResponse | undefined;
  try {
    body = JSON.parse(text) as QueryResponse;
  } catch {
    body = undefined;
  }
  if (!response.ok || body?.status !== 'success') {
    const reason = body?.error ? `${body.errorType ?? 'error'}: ${body.error}` : text.slice(0, 200) || response.statusText;
    throw new PrometheusUnavailableError(`Prometheus at ${baseUrl} answered ${response.status}: ${reason}`);
  }
  return resultOf(body.data);
}

/** The first value of a vector or a scalar; `empty` for no series or a non-finite value. */
export function resultOf(data: QueryResponse['data']): QueryResult {
  let raw: unknown;
  if (data?.resultType === 'vector') {
    const series = data.result as { value?: [number, string] }[] | undefined;
    raw = series?.[0]?.value?.[1];
  } else if (data?.resultType === 'scalar') {
    raw = (data.result as [number, string] | undefined)?.[1];
  } else {
    throw new PrometheusUnavailableError(`the analysis query must return a vector or scalar, not ${data?.resultType ?? 'nothing'}`);
  }
  if (raw === undefined) return { kind: 'empty' };
  const value = Number(raw);
  return Number.isFinite(value) ? { kind: 'value', value } : { kind: 'empty' };
}
