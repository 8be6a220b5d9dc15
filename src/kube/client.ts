// One client for every kind: plain JSON over HTTPS (HTTP/2 where the server offers it) with the
// kubeconfig's credentials.
// client-node's typed APIs re-serialise built-in kinds through models (dropping unknown
// fields) and default to the wrong patch strategies, so writes go through here with
// explicit content types, and kinds are resolved through discovery (CRDs included).
import { createHash } from 'node:crypto';
import http from 'node:http';
import type https from 'node:https';
import type { Readable } from 'node:stream';
import type { ApiAnswer, ApiTransport } from './api-transport.js';
import { Discovery, resourcePath, type ResourceInfo } from './discovery.js';
import { errorFromResponse, toKubeError, TransientError } from './errors.js';
import { Http1Transport } from './http1-transport.js';
import { Http2Transport } from './http2-transport.js';
import type { KubeAccess } from './kube-config.js';
import { KubeConfigError } from './kube-config-error.js';
import type { KindRef, KubeObject, ObjectRef } from './kube-object.js';
import type { ObjectClient } from './object-client.js';
import { TlsIdentityAgent } from './tls-identity-agent.js';

// The kubeconfig loader is part of the client's API (`import { KubeClient, loadKubeConfig } from './kube/client.js'`).
export { loadKubeConfig, type LoadedKubeConfig, type KubeAccess, type KubeConfigSource } from './kube-config.js';
export { KubeConfigError } from './kube-config-error.js';

export type HttpMethod = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

export interface HttpRequest {
  method?: HttpMethod;
  /** Path below the server URL, e.g. `/api/v1/namespaces`. */
  path: string;
  query?: Record<string, string | number | boolean | undefined>;
  /** Sent as JSON unless already a string. */
  body?: unknown;
  /** Default `application/json`. */
  contentType?: string;
  /** Idle timeout (default: the client's `requestTimeoutMs`); 0 disables it. */
  timeoutMs?: number;
  signal?: AbortSignal;
}

/** How a patch body is interpreted by the API server. */
export type PatchType = 'apply' | 'merge' | 'json' | 'strategic';

const patchContentTypes: Record<PatchType, string> = {
  apply: 'application/apply-patch+yaml',
  merge: 'application/merge-patch+json',
  json: 'application/json-patch+json',
  strategic: 'application/strategic-merge-patch+json',
};

export interface WriteOptions {
  /** Server-side dry run: validated and admitted, never persisted. */
  dryRun?: boolean;
  /** e.g. `status`. */
  subresource?: string;
  /** Write as this field manager instead of the client's (e.g. to hand a field to a manager of its own). */
  fieldManager?: string;
}

export interface PatchOptions extends WriteOptions {
  /** Take ownership of fields other managers own (default true: the operator's desired state wins). */
  force?: boolean;
}

export interface ListOptions {
  /** Omit for cluster-scoped kinds, or to list across all namespaces. */
  namespace?: string;
  labelSelector?: string;
  fieldSelector?: string;
  /** Page size (default 500). */
  limit?: number;
  signal?: AbortSignal;
}

export interface ListResult<T extends KubeObject = KubeObject> {
  items: T[];
  /** The collection's resourceVersion: watch from here to see every later change. */
  resourceVersion: string;
}

export interface DeleteOptions {
  /** Default `Background`. */
  propagationPolicy?: 'Background' | 'Foreground' | 'Orphan';
  /** Delete only if the object still has this uid / resourceVersion. */
  preconditions?: { uid?: string; resourceVersion?: string };
  gracePeriodSeconds?: number;
  dryRun?: boolean;
}

export interface KubeClientOptions {
  /** The field manager recorded for every write (default `preview-operator`). */
  fieldManager?: string;
  /** Default `preview-operator`. */
  userAgent?: string;
  /** Per-request timeout for non-streaming calls (default 30 s). */
  requestTimeoutMs?: number;
  /**
   * How long the kubeconfig's credentials (CA, client certificate, token file, exec plugin)
   * are reused before they are read again (default 10 s; a 401 reads them at once). Reading
   * them for every request costs a file read and a hash per API call.
   */
  credentialsTtlMs?: number;
}

/** The kubeconfig applied to a request, and the transport for its TLS identity. */
interface Credentials {
  options: https.RequestOptions;
  transport: ApiTransport;
  /** Read again from then on: `credentialsTtlMs` after reading, or when they expire if sooner. */
  freshUntil: number;
}

/** An open streaming response (a watch). */
export interface OpenStream {
  body: Readable;
  /** Ends the request (its HTTP/2 stream, or its HTTP/1.1 socket). */
  close(): void;
}

/**
 * The runtime's API client. Objects are plain JSON (`KubeObject`); every method throws
 * the typed errors of `errors.ts`.
 */
export class KubeClient implements ObjectClient {
  readonly discovery: Discovery;
  readonly fieldManager: string;
  private readonly userAgent: string;
  private readonly requestTimeoutMs: number;
  private readonly credentialsTtlMs: number;
  private transport: { fingerprint: string; transport: ApiTransport } | undefined;
  private credentials: Credentials | undefined;

  constructor(
    readonly kubeConfig: KubeAccess,
    options: KubeClientOptions = {},
  ) {
    this.fieldManager = options.fieldManager ?? 'preview-operator';
    this.userAgent = options.userAgent ?? 'preview-operator';
    this.requestTimeoutMs = options.requestTimeoutMs ?? 30_000;
    this.credentialsTtlMs = options.credentialsTtlMs ?? 10_000;
    this.discovery = new Discovery((p) => this.request({ path: p }));
  }

  /** One request; resolves with the parsed JSON body (undefined when empty). */
  async request<T = unknown>(req: HttpRequest): Promise<T> {
    const what = `${req.method ?? 'GET'} ${req.path}`;
    const answer = await this.send(req, what);
    const text = await readBody(answer, what);
    const code = answer.status;
    if (code < 200 || code >= 300) throw errorFromResponse(code, text, what);
    if (!text) return undefined as T;
    try {
      return JSON.parse(text) as T;
    } catch (err) {
      // Text (a health check's `ok`) is returned as such; JSON that does not parse is never an answer.
      if (answer.contentType?.includes('json'))
        throw new TransientError(`${what}: the answer is not whole JSON`, 0, 'Malformed', undefined, { cause: err });
      return text as T;
    }
  }

  /**
   * A streaming GET (watch). The answer's headers must arrive within the request timeout;
   * after that the stream may stay quiet indefinitely (the caller watches for silence).
   * A non-2xx answer throws the typed error.
   */
  async stream(req: HttpRequest): Promise<OpenStream> {
    const what = `${req.method ?? 'GET'} ${req.path}`;
    const answer = await this.send(req, what);
    const code = answer.status;
    if (code < 200 || code >= 300) throw errorFromResponse(code, await readBody(answer, what), what);
    answer.untimed();
    return { body: answer.body, close: () => answer.close() };
  }

  /** How the server serves `kind` (throws `NoKindMatchError` if it does not). */
  resolve(kind: KindRef): Promise<ResourceInfo> {
    return this.discovery.resolve(kind);
  }

  /** The REST path of an object or collection, e.g. for raw `request`s. */
  async pathOf(ref: KindRef & { namespace?: string; name?: string }, subresource?: string): Promise<string> {
    const info = await this.resolve(ref);
    return resourcePath(info, { namespace: ref.namespace, name: ref.name, subresource });
  }

  async get<T extends KubeObject = KubeObject>(ref: ObjectRef, options: { subresource?: string } = {}): Promise<T> {
    return this.request<T>({ path: await this.pathOf(ref, options.subresource) });
  }

  /** Every object of a kind (all pages), with the collection's resourceVersion. Items carry apiVersion and kind. */
  async list<T extends KubeObject = KubeObject>(kind: KindRef, options: ListOptions = {}): Promise<ListResult<T>> {
    const info = await this.resolve(kind);
    const path = resourcePath(info, { namespace: options.namespace });
    const items: T[] = [];
    let cont: string | undefined;
    let resourceVersion = '';
    do {
      const page = await this.request<{ items?: T[]; metadata?: { resourceVersion?: string; continue?: string } }>({
        path,
        query: { labelSelector: options.labelSelector, fieldSelector: options.fieldSelector, limit: options.limit ?? 500, continue: cont },
        signal: options.signal,
      });
      for (const item of page.items ?? []) {
        // Lists of built-in kinds omit each item's apiVersion/kind.
        items.push({ ...item, apiVersion: item.apiVersion ?? info.apiVersion, kind: item.kind ?? info.kind });
      }
      resourceVersion = page.metadata?.resourceVersion ?? resourceVersion;
      cont = page.metadata?.continue || undefined;
    } while (cont);
    return { items, resourceVersion };
  }

  async create<T extends KubeObject = KubeObject>(obj: KubeObject, options: WriteOptions = {}): Promise<T> {
    const path = await this.pathOf({ apiVersion: obj.apiVersion, kind: obj.kind, namespace: obj.metadata.namespace });
    return this.request<T>({ method: 'POST', path, body: obj, query: this.writeQuery(options) });
  }

  /** PUT: replaces the object; guarded by `metadata.resourceVersion` when set. */
  async replace<T extends KubeObject = KubeObject>(obj: KubeObject, options: WriteOptions = {}): Promise<T> {
    const path = await this.pathOf(this.refOf(obj), options.subresource);
    return this.request<T>({ method: 'PUT', path, body: obj, query: this.writeQuery(options) });
  }

  /** Server-side apply of `obj` with this client's field manager (force by default). */
  async apply<T extends KubeObject = KubeObject>(obj: KubeObject, options: PatchOptions = {}): Promise<T> {
    const path = await this.pathOf(this.refOf(obj), options.subresource);
    return this.request<T>({
      method: 'PATCH',
      path,
      body: obj,
      contentType: patchContentTypes.apply,
      query: { ...this.writeQuery(options), force: options.force ?? true },
    });
  }

  /** A patch with an explicit strategy (`merge` for status and metadata, `json` for precise edits). */
  async patch<T extends KubeObject = KubeObject>(ref: ObjectRef, type: PatchType, patch: unknown, options: PatchOptions = {}): Promise<T> {
    const path = await this.pathOf(ref, options.subresource);
    const query = { ...this.writeQuery(options), force: type === 'apply' ? (options.force ?? true) : undefined };
    return this.request<T>({ method: 'PATCH', path, body: patch, contentType: patchContentTypes[type], query });
  }

  /** Deletes an object (background propagation by default). A missing object throws `NotFoundError`. */
  async delete(ref: ObjectRef, options: DeleteOptions = {}): Promise<void> {
    const path = await this.pathOf(ref);
    const body: Record<string, unknown> = {
      kind: 'DeleteOptions',
      apiVersion: 'v1',
      propagationPolicy: options.propagationPolicy ?? 'Background',
    };
    if (options.preconditions) body.preconditions = options.preconditions;
    if (options.gracePeriodSeconds !== undefined) body.gracePeriodSeconds = options.gracePeriodSeconds;
    // With a body, the server reads options from it only: dryRun must be there, not in the query.
    if (options.dryRun) body.dryRun = ['All'];
    await this.request({ method: 'DELETE', path, body });
  }

  private refOf(obj: KubeObject): ObjectRef {
    if (!obj.metadata?.name) throw new Error(`${obj.kind} has no metadata.name`);
    return { apiVersion: obj.apiVersion, kind: obj.kind, name: obj.metadata.name, namespace: obj.metadata.namespace };
  }

  private writeQuery(options: WriteOptions): Record<string, string | undefined> {
    return { fieldManager: options.fieldManager ?? this.fieldManager, dryRun: options.dryRun ? 'All' : undefined };
  }

  private async send(req: HttpRequest, what: string): Promise<ApiAnswer> {
    const cluster = this.kubeConfig.getCurrentCluster();
    if (!cluster) throw new Error('kubeconfig has no current cluster');
    const url = new URL(cluster.server.replace(/\/+$/, '') + req.path);
    for (const [key, value] of Object.entries(req.query ?? {})) {
      if (value !== undefined && value !== '') url.searchParams.set(key, String(value));
    }
    const credentials = await this.credentialsFor(url, cluster.proxyUrl, what);
    const { options: opts, transport } = credentials;
    const body = req.body === undefined ? undefined : typeof req.body === 'string' ? req.body : JSON.stringify(req.body);
    const headers: http.OutgoingHttpHeaders = {
      ...(opts.headers as http.OutgoingHttpHeaders),
      accept: 'application/json',
      'user-agent': this.userAgent,
    };
    // Basic auth (client-node's `auth`), sent as node's HTTP/1.1 client would send it.
    if (opts.auth) headers.authorization = `Basic ${Buffer.from(opts.auth).toString('base64')}`;
    if (body !== undefined) {
      headers['content-type'] = req.contentType ?? 'application/json';
      headers['content-length'] = Buffer.byteLength(body);
    }
    const timeoutMs = req.timeoutMs ?? this.requestTimeoutMs;
    let answer: ApiAnswer;
    try {
      answer = await transport.send({ method: req.method ?? 'GET', url, headers, body, timeoutMs, signal: req.signal, what });
    } catch (err) {
      throw toKubeError(err, what);
    }
    // Rotated or expired credentials: read them again for the next request (once, not
    // once per request that was in flight with them), and make an exec plugin run again.
    if (answer.status === 401 && this.credentials === credentials) {
      this.credentials = undefined;
      this.kubeConfig.credentialsRejected?.(credentials.options);
    }
    return answer;
  }

  /** The kubeconfig's credentials as request options, read again after `credentialsTtlMs`. */
  private async credentialsFor(server: URL, proxyUrl: string | undefined, what: string): Promise<Credentials> {
    const now = Date.now();
    if (this.credentials && now < this.credentials.freshUntil) return this.credentials;
    const options: https.RequestOptions = { headers: {} };
    let transport: ApiTransport;
    try {
      await this.kubeConfig.applyToHTTPSOptions(options);
      // Our own transport, never an agent the kubeconfig made: connections are kept and reused across credential reads.
      transport = this.transportFor(options, server, proxyUrl);
    } catch (err) {
      // A credential plugin that timed out or failed may succeed next time: retryable, like a network error.
      if (err instanceof KubeConfigError && err.transient)
        throw new TransientError(`${what}: credentials: ${err.message}`, 0, 'CredentialPlugin', undefined, { cause: err });
      throw toKubeError(err, `${what}: credentials`);
    }
    const expiresAt = this.kubeConfig.credentialsExpireAt?.(options) ?? Number.POSITIVE_INFINITY;
    this.credentials = { options, transport, freshUntil: Math.min(now + this.credentialsTtlMs, expiresAt) };
    return this.credentials;
  }

  /** One transport per TLS identity (and proxy), so requests reuse connections while the CA and client cert stay the same. */
  private transportFor(opts: https.RequestOptions, server: URL, proxyUrl: string | undefined): ApiTransport {
    const isHttps = server.protocol === 'https:';
    const fingerprint = createHash('sha256')
      .update(String(isHttps))
      .update('\0')
      .update(proxyUrl ?? '')
      .update('\0')
      .update(String(opts.ca ?? ''))
      .update('\0')
      .update(String(opts.cert ?? ''))
      .update('\0')
      .update(String(opts.key ?? ''))
      .update('\0')
      .update(String(opts.rejectUnauthorized))
      .update(String(opts.servername ?? ''))
      .digest('hex');
    if (this.transport?.fingerprint !== fingerprint) {
      this.transport?.transport.close();
      // A connection that cannot answer a ping within a request's timeout (at most client-go's 15 s) is gone.
      const pingTimeoutMs = Math.min(15_000, this.requestTimeoutMs || 15_000);
      this.transport = { fingerprint, transport: newTransport(opts, server, proxyUrl, this.kubeConfig, pingTimeoutMs) };
    }
    return this.transport.transport;
  }

  /** Closes its connections, ending requests and watches still open (call when the process is done with the client). */
  close(): void {
    this.transport?.transport.close();
    this.transport = undefined;
    this.credentials = undefined;
  }
}

/**
 * HTTP/2 to a TLS server (HTTP/1.1 if it does not offer h2); HTTP/1.1 to a plain http:// server and through
 * the kubeconfig's proxy-url (the proxy agent tunnels HTTP/1.1).
 */
function newTransport(
  opts: https.RequestOptions,
  server: URL,
  proxyUrl: string | undefined,
  kubeConfig: KubeAccess,
  pingTimeoutMs: number,
): ApiTransport {
  if (server.protocol !== 'https:') {
    if (proxyUrl) throw new Error('proxy-url is supported for https:// servers only');
    return new Http1Transport(new http.Agent({ keepAlive: true }), false);
  }
  const tlsOptions: https.AgentOptions = {
    ca: opts.ca,
    cert: opts.cert,
    key: opts.key,
    pfx: opts.pfx,
    passphrase: opts.passphrase,
    servername: opts.servername,
    ...(opts.rejectUnauthorized === undefined ? {} : { rejectUnauthorized: opts.rejectUnauthorized }),
  };
  if (proxyUrl) {
    const agent = kubeConfig.proxyAgent?.({ ...tlsOptions, keepAlive: true });
    if (!agent) throw new Error(`proxy-url ${proxyUrl}: this kubeconfig object has no proxy agent (load it with loadKubeConfig)`);
    return new Http1Transport(agent, true);
  }
  const http1 = () => new Http1Transport(new TlsIdentityAgent({ ...tlsOptions, keepAlive: true }), true);
  return new Http2Transport(server, tlsOptions, http1, { pingTimeoutMs });
}

/**
 * The whole body as text. A body cut short is a transient error, never a shorter answer: over HTTP/2 a
 * connection closed, or a stream reset (CANCEL, NO_ERROR), mid-body ends the stream without an error, but
 * destroyed before its end; a content-length names what must arrive.
 */
function readBody(answer: ApiAnswer, what: string): Promise<string> {
  const { body, contentLength } = answer;
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let received = 0;
    let ended = false;
    const cutShort = () => new TransientError(`${what}: connection closed mid-answer`, 0, 'Aborted');
    body.on('data', (chunk: Buffer) => {
      chunks.push(chunk);
      received += chunk.length;
    });
    body.once('end', () => {
      ended = true;
      if (body.destroyed || (contentLength !== undefined && received !== contentLength)) reject(cutShort());
      else resolve(Buffer.concat(chunks, received).toString('utf8'));
    });
    body.once('error', (err) => reject(toKubeError(err, what)));
    // Every body closes; an error (and its stack trace) is built only for one that closed unfinished.
    body.once('close', () => ended || reject(cutShort()));
  });
}
