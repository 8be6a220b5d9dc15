// The one place where failures of the API server (or of reaching it) become typed errors.
// Callers branch with `instanceof`, never on status codes or message text.

/** One reason the API server gave for rejecting an object (`Status.details.causes[]`). */
export interface StatusCause {
  /** e.g. `FieldValueInvalid`, `FieldValueRequired`. */
  reason?: string;
  message?: string;
  /** e.g. `spec.replicas`. */
  field?: string;
}

/** The API server's `Status` object, as sent with an error. */
export interface ApiStatus {
  kind?: 'Status';
  status?: string;
  message?: string;
  reason?: string;
  code?: number;
  details?: { name?: string; group?: string; kind?: string; causes?: StatusCause[]; retryAfterSeconds?: number };
}

/** Base of every error the runtime throws for a failed API call. */
export class KubeError extends Error {
  /** HTTP status, or 0 when no answer was received. */
  readonly statusCode: number;
  /** The Status reason (`NotFound`, `Conflict`, `AlreadyExists`, …) or a network error code. */
  readonly reason: string;
  readonly status?: ApiStatus;

  constructor(message: string, statusCode: number, reason: string, status?: ApiStatus, options?: { cause?: unknown }) {
    super(message, options);
    this.name = new.target.name;
    this.statusCode = statusCode;
    this.reason = reason;
    this.status = status;
  }
}

/** 404: the object (or its namespace) does not exist. */
export class NotFoundError extends KubeError {}

/** 409: a stale resourceVersion (`Conflict`) or a create of an existing name (`AlreadyExists`). */
export class ConflictError extends KubeError {
  get alreadyExists(): boolean {
    return this.reason === 'AlreadyExists';
  }
}

/** 401/403: the identity may not do this (RBAC, admission, a terminating namespace). */
export class ForbiddenError extends KubeError {
  /** Refused because the namespace is being deleted: whatever was meant for it goes with it. */
  get namespaceTerminating(): boolean {
    return (this.status?.details?.causes ?? []).some((c) => c.reason === 'NamespaceTerminating');
  }
}

/** 400/422: the object or request is invalid; `causes` says which fields and why. */
export class InvalidError extends KubeError {
  get causes(): StatusCause[] {
    return this.status?.details?.causes ?? [];
  }
}

/** 410: a resourceVersion or continue token too old to serve (watch and paginated list must start over). */
export class ExpiredError extends KubeError {}

/** 429, 5xx, timeouts and network failures: worth retrying as is. */
export class TransientError extends KubeError {
  /** How long the server asked us to wait, if it did. */
  get retryAfterMs(): number | undefined {
    const s = this.status?.details?.retryAfterSeconds;
    return s === undefined ? undefined : s * 1000;
  }
}

/** The API server does not serve this kind (a CRD not installed, a typo). */
export class NoKindMatchError extends KubeError {
  constructor(
    readonly apiVersion: string,
    readonly kind: string,
  ) {
    super(`no resource of kind ${kind} is served in ${apiVersion}`, 404, 'NoKindMatch');
  }
}

const networkCodes = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EPIPE',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EAI_AGAIN',
  'ENOTFOUND',
  'ECONNABORTED',
  'UND_ERR_SOCKET',
  'ERR_STREAM_PREMATURE_CLOSE',
  'ABORT_ERR',
  // An HTTP/2 stream reset, a connection that failed, went away or ran out of stream ids, a protocol error.
  'ERR_HTTP2_STREAM_ERROR',
  'ERR_HTTP2_SESSION_ERROR',
  'ERR_HTTP2_GOAWAY_SESSION',
  'ERR_HTTP2_INVALID_SESSION',
  'ERR_HTTP2_STREAM_CANCEL',
  'ERR_HTTP2_OUT_OF_STREAMS',
  'ERR_HTTP2_PING_CANCEL',
  'ERR_HTTP2_ERROR',
]);

/** The typed error for an HTTP answer with status `code` and body `body` (a JSON `Status`, or any text). */
export function errorFromResponse(code: number, body: unknown, what = 'request'): KubeError {
  const status = parseStatus(body);
  const reason = status?.reason ?? httpReason(code);
  const message = `${what}: ${status?.message ?? (typeof body === 'string' && body ? body.slice(0, 500) : reason)} (${code})`;
  if (code === 404) return new NotFoundError(message, code, reason, status);
  if (code === 409) return new ConflictError(message, code, reason, status);
  if (code === 401 || code === 403) return new ForbiddenError(message, code, reason, status);
  if (code === 400 || code === 422) return new InvalidError(message, code, reason, status);
  if (code === 410) return new ExpiredError(message, code, reason, status);
  if (code === 429 || code >= 500 || code === 408) return new TransientError(message, code, reason, status);
  return new KubeError(message, code, reason, status);
}

/**
 * Any thrown value as a `KubeError`: our own errors pass through; client-node's
 * `ApiException` (whose `body` is a string), errors carrying `statusCode`, and
 * network errors are mapped; anything else becomes a plain `KubeError`.
 */
export function toKubeError(err: unknown, what = 'request'): KubeError {
  if (err instanceof KubeError) return err;
  const e = err as { code?: unknown; statusCode?: unknown; body?: unknown; message?: string; name?: string };
  // client-node's ApiException: numeric `code`, string `body`.
  if (typeof e?.code === 'number' && e.code >= 100) return errorFromResponse(e.code, e.body, what);
  if (typeof e?.statusCode === 'number') return errorFromResponse(e.statusCode, e.body ?? e.message, what);
  if (typeof e?.code === 'string' && networkCodes.has(e.code)) {
    return new TransientError(`${what}: ${e.message ?? e.code}`, 0, e.code, undefined, { cause: err });
  }
  if (e?.name === 'AbortError' || e?.name === 'TimeoutError' || e?.name === 'FetchError') {
    return new TransientError(`${what}: ${e.message ?? e.name}`, 0, e.name, undefined, { cause: err });
  }
  const message = err instanceof Error ? err.message : String(err);
  return new KubeError(`${what}: ${message}`, 0, 'Unknown', undefined, { cause: err });
}

/** True for errors a retry can fix without anyone changing anything. */
export function isTransient(err: unknown): boolean {
  return toKubeError(err) instanceof TransientError;
}

function parseStatus(body: unknown): ApiStatus | undefined {
  let value = body;
  if (typeof body === 'string') {
    try {
      value = JSON.parse(body);
    } catch {
      return undefined;
    }
  }
  if (value && typeof value === 'object' && ((value as ApiStatus).kind === 'Status' || 'reason' in value)) return value as ApiStatus;
  return undefined;
}

function httpReason(code: number): string {
  switch (code) {
    case 400:
      return 'BadRequest';
    case 401:
      return 'Unauthorized';
    case 403:
      return 'Forbidden';
    case 404:
      return 'NotFound';
    case 405:
      return 'MethodNotAllowed';
    case 409:
      return 'Conflict';
    case 410:
      return 'Expired';
    case 415:
      return 'UnsupportedMediaType';
    case 422:
      return 'Invalid';
    case 429:
      return 'TooManyRequests';
    case 500:
      return 'InternalError';
    case 503:
      return 'ServiceUnavailable';
    case 504:
      return 'Timeout';
    default:
      return `HTTP${code}`;
  }
}
