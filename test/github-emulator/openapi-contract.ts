// GitHub's published REST description (@octokit/openapi) compiled with ajv: finds the
// operation a request targets and checks requests, responses and webhook payloads
// against it. Loaded once per process (the description is 13 MB).
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import formats from 'ajv-formats';

export interface OpenApiParameter {
  name: string;
  in: 'path' | 'query' | 'header' | 'cookie';
  required?: boolean;
  schema?: Record<string, unknown>;
  'x-multi-segment'?: boolean;
}

export interface OpenApiOperation {
  operationId: string;
  method: string;
  /** The path template, e.g. `/repos/{owner}/{repo}/pulls`. */
  path: string;
  parameters: OpenApiParameter[];
  hasRequestBody: boolean;
  requestBodyRequired: boolean;
  /** Status codes (as strings) the description lists for this operation. */
  statuses: string[];
}

export interface MatchedOperation {
  operation: OpenApiOperation;
  pathParams: Record<string, string>;
}

/** What a request carried, as the server saw it. */
export interface RequestToCheck {
  pathParams: Record<string, string>;
  query: URLSearchParams;
  /** The parsed JSON body, or undefined when there was none. */
  body: unknown;
  contentType: string | undefined;
}

interface CompiledPath {
  regex: RegExp;
  literalWeight: number;
  names: string[];
  operations: Map<string, OpenApiOperation>;
  /** Segments it matches (undefined: a parameter spans several), and its first segment (undefined: a parameter). */
  segments?: number;
  first?: string;
}

const schemaId = 'github-rest';
const methods = ['get', 'put', 'post', 'patch', 'delete', 'head'];

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

/**
 * Turns the description's OpenAPI 3.0 dialect into JSON Schema ajv checks as meant:
 * - `nullable` is not JSON Schema, and ajv accepts it only next to `type`, while GitHub
 *   also puts it next to `allOf`/`anyOf`/`$ref`: every nullable schema becomes
 *   `anyOf: [null, schema]`;
 * - a formatted string whose documented `default` is `""` (e.g. a deployment status's
 *   `target_url`) may be that empty default, as GitHub returns it.
 */
function normalizeSchema(node: Json, formatsSeen: Set<string>): Json {
  if (Array.isArray(node)) return node.map((item) => normalizeSchema(item, formatsSeen));
  if (node === null || typeof node !== 'object') return node;
  const out: { [key: string]: Json } = {};
  for (const [key, value] of Object.entries(node)) out[key] = normalizeSchema(value, formatsSeen);
  if (typeof out.format === 'string') formatsSeen.add(out.format);
  if (typeof out.format === 'string' && out.default === '' && out.type === 'string') {
    const { nullable, ...rest } = out;
    const emptyOrFormatted: Json = { anyOf: [{ const: '' }, rest] };
    return nullable === true ? { anyOf: [{ type: 'null' }, emptyOrFormatted] } : emptyOrFormatted;
  }
  if (out.nullable === true) {
    const { nullable: _, ...rest } = out;
    return { anyOf: [{ type: 'null' }, rest] };
  }
  if (typeof out.nullable === 'boolean') delete out.nullable;
  return out;
}

function pointer(...parts: string[]): string {
  return `${schemaId}#/${parts.map((p) => encodeURIComponent(p.replace(/~/g, '~0').replace(/\//g, '~1'))).join('/')}`;
}

/** `#/components/schemas/a~1b` → ['components', 'schemas', 'a/b'] */
function refParts(ref: string): string[] {
  return ref
    .replace(/^#\//, '')
    .split('/')
    .map((p) => p.replace(/~1/g, '/').replace(/~0/g, '~'));
}

function formatErrors(errors: ErrorObject[] | null | undefined, limit = 8): string {
  if (!errors?.length) return '';
  // anyOf/oneOf failures repeat every branch's errors; the first few are the useful ones.
  return errors
    .slice(0, limit)
    .map(
      (e) =>
        `${e.instancePath || '/'} ${e.message ?? e.keyword}${
          e.params && 'additionalProperty' in e.params ? ` (${String(e.params.additionalProperty)})` : ''
        }${e.params && 'allowedValues' in e.params ? ` ${JSON.stringify(e.params.allowedValues)}` : ''}`,
    )
    .join('; ');
}

export class OpenApiContract {
  private readonly ajv: Ajv;
  private readonly paths: CompiledPath[] = [];
  /**
   * The paths a URL path can match, by segment count and first segment: tried in `paths` order
   * without running GitHub's ~1,000 path patterns on every request (the burst bench spent 12 %
   * of its own CPU there).
   */
  private readonly candidates = new Map<string, CompiledPath[]>();
  private readonly firstSegments = new Set<string>();
  private readonly byId = new Map<string, OpenApiOperation>();
  private readonly validators = new Map<string, ValidateFunction>();
  private readonly document: { paths: Record<string, Record<string, unknown>>; components: Record<string, Record<string, unknown>> };

  constructor(specFile: string) {
    const raw = JSON.parse(readFileSync(specFile, 'utf8')) as Record<string, Json>;
    const formatsSeen = new Set<string>();
    const rewritten = normalizeSchema(
      { paths: raw.paths!, components: raw.components!, 'x-webhooks': raw['x-webhooks']! },
      formatsSeen,
    ) as Record<string, Json>;
    this.document = rewritten as unknown as OpenApiContract['document'];
    // Separate functions for referenced schemas and no code optimisation halve the compile
    // time of GitHub's large schemas (the webhook payloads take ~1 s each otherwise).
    this.ajv = new Ajv({
      strict: false,
      allErrors: true,
      validateSchema: false,
      logger: false,
      inlineRefs: false,
      code: { optimize: false },
    });
    formats.default(this.ajv);
    // GitHub-specific formats (`timestamp`, `repo.nwo`) carry no rule we can check.
    for (const f of formatsSeen) if (!this.ajv.formats[f]) this.ajv.addFormat(f, true);
    this.ajv.addSchema({ $id: schemaId, ...rewritten });
    this.indexOperations();
  }

  private resolve<T>(node: T): T {
    const ref = (node as { $ref?: string } | undefined)?.$ref;
    if (!ref) return node;
    const parts = refParts(ref);
    let cur: unknown = this.document;
    for (const part of parts) cur = (cur as Record<string, unknown>)[part];
    return this.resolve(cur as T);
  }

  private indexOperations(): void {
    for (const [template, item] of Object.entries(this.document.paths)) {
      const shared = ((item.parameters as unknown[]) ?? []).map((p) => this.resolve(p) as OpenApiParameter);
      const operations = new Map<string, OpenApiOperation>();
      for (const method of methods) {
        const op = item[method] as Record<string, unknown> | undefined;
        if (!op) continue;
        const own = ((op.parameters as unknown[]) ?? []).map((p) => this.resolve(p) as OpenApiParameter);
        const parameters = [...shared.filter((s) => !own.some((o) => o.name === s.name && o.in === s.in)), ...own];
        const body = this.resolve(op.requestBody as Record<string, unknown> | undefined);
        const operation: OpenApiOperation = {
          operationId: op.operationId as string,
          method: method.toUpperCase(),
          path: template,
          parameters,
          hasRequestBody: !!body,
          requestBodyRequired: body?.required === true,
          statuses: Object.keys((op.responses as Record<string, unknown>) ?? {}),
        };
        operations.set(operation.method, operation);
        this.byId.set(operation.operationId, operation);
      }
      const names: string[] = [];
      let literalWeight = 0;
      const segments = template.split('/');
      const pattern = segments
        .map((segment) => {
          const m = /^\{(.+)\}$/.exec(segment);
          if (!m) {
            literalWeight += 1;
            return segment.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
          }
          names.push(m[1]!);
          const multi = [...operations.values()].some((o) => o.parameters.some((p) => p.name === m[1] && p['x-multi-segment']));
          return multi ? '(.+)' : '([^/]+)';
        })
        .join('/');
      this.paths.push({
        regex: new RegExp(`^${pattern}$`),
        literalWeight,
        names,
        operations,
        segments: pattern.includes('(.+)') ? undefined : segments.length,
        first: segments[1]?.startsWith('{') ? undefined : segments[1],
      });
    }
    // A literal segment beats a parameter (`/issues/comments` is not issue "comments").
    this.paths.sort((a, b) => b.literalWeight - a.literalWeight);
    for (const p of this.paths) if (p.first !== undefined) this.firstSegments.add(p.first);
  }

  private candidatesFor(path: string): CompiledPath[] {
    const segments = path.split('/');
    // Keyed by known first segments only: unknown paths share one entry per length.
    const first = this.firstSegments.has(segments[1] ?? '') ? segments[1] : undefined;
    const key = `${segments.length} ${first ?? '*'}`;
    let list = this.candidates.get(key);
    if (!list) {
      list = this.paths.filter(
        (p) => (p.segments === undefined || p.segments === segments.length) && (p.first === undefined || p.first === first),
      );
      this.candidates.set(key, list);
    }
    return list;
  }

  operation(operationId: string): OpenApiOperation {
    const op = this.byId.get(operationId);
    if (!op) throw new Error(`GitHub's OpenAPI description has no operation ${operationId}`);
    return op;
  }

  /** The operation for a method and a path (without query), or undefined when GitHub has none. */
  match(method: string, path: string): MatchedOperation | { operation: undefined; pathExists: boolean } {
    let pathExists = false;
    for (const candidate of this.candidatesFor(path)) {
      const m = candidate.regex.exec(path);
      if (!m) continue;
      pathExists = true;
      const operation = candidate.operations.get(method.toUpperCase());
      if (!operation) continue;
      const pathParams: Record<string, string> = {};
      candidate.names.forEach((name, i) => (pathParams[name] = decodeURIComponent(m[i + 1]!)));
      return { operation, pathParams };
    }
    return { operation: undefined, pathExists };
  }

  private validator(key: string, ref: string): ValidateFunction {
    let v = this.validators.get(key);
    if (!v) {
      v = this.ajv.compile({ $ref: ref });
      this.validators.set(key, v);
    }
    return v;
  }

  private checkValue(key: string, ref: string, value: unknown): string | undefined {
    const v = this.validator(key, ref);
    return v(value) ? undefined : formatErrors(v.errors);
  }

  /** Every way the request departs from the operation's description (empty when it conforms). */
  checkRequest(op: OpenApiOperation, req: RequestToCheck): string[] {
    const problems: string[] = [];
    const known = new Set(op.parameters.filter((p) => p.in === 'query').map((p) => p.name));
    for (const name of new Set(req.query.keys())) {
      if (!known.has(name)) problems.push(`query parameter "${name}" is not defined for ${op.operationId}`);
    }
    for (const param of op.parameters) {
      if (param.in !== 'path' && param.in !== 'query') continue;
      const raw = param.in === 'path' ? req.pathParams[param.name] : (req.query.get(param.name) ?? undefined);
      if (raw === undefined) {
        if (param.required) problems.push(`${param.in} parameter "${param.name}" is required`);
        continue;
      }
      const value = coerceParameter(raw, param.schema ?? {});
      const problem = this.checkParameter(op, param, value);
      if (problem) problems.push(`${param.in} parameter "${param.name}"=${JSON.stringify(raw)}: ${problem}`);
    }
    if (req.body !== undefined) {
      if (!op.hasRequestBody) {
        problems.push(`${op.operationId} takes no request body`);
      } else {
        if (!req.contentType?.toLowerCase().startsWith('application/json')) {
          problems.push(`request body sent as ${req.contentType ?? 'no content type'}, not application/json`);
        }
        const ref =
          this.requestBodyRef(op) ??
          pointer('paths', op.path, op.method.toLowerCase(), 'requestBody', 'content', 'application/json', 'schema');
        const error = this.checkValue(`${op.operationId}:body`, ref, req.body);
        if (error) problems.push(`request body: ${error}`);
      }
    } else if (op.requestBodyRequired) {
      problems.push(`${op.operationId} requires a request body`);
    }
    return problems;
  }

  private checkParameter(op: OpenApiOperation, param: OpenApiParameter, value: unknown): string | undefined {
    // Parameter schemas are small: compile them on their own, pointing any local
    // reference at the loaded description.
    const key = `${op.operationId}:${param.in}:${param.name}`;
    let v = this.validators.get(key);
    if (!v) {
      v = this.ajv.compile(anchorRefs(param.schema ?? {}) as object);
      this.validators.set(key, v);
    }
    return v(value) ? undefined : formatErrors(v.errors);
  }

  private requestBodyRef(op: OpenApiOperation): string | undefined {
    const item = this.document.paths[op.path]![op.method.toLowerCase()] as { requestBody?: { $ref?: string } };
    const ref = item.requestBody?.$ref;
    if (!ref) return undefined;
    return pointer(...refParts(ref), 'content', 'application/json', 'schema');
  }

  /**
   * Problems with a response: a status the operation does not list (errors GitHub can
   * give on any route — 401, 403, 404, 422, 429, 5xx — are checked as `basic-error`),
   * or a body that does not match the listed schema.
   */
  checkResponse(op: OpenApiOperation, status: number, body: unknown, mediaType = 'application/json'): string[] {
    const listed = op.statuses.includes(String(status));
    if (!listed) {
      if (status >= 400) {
        const error = this.checkValue('basic-error', pointer('components', 'schemas', 'basic-error'), body);
        return error ? [`error response ${status}: ${error}`] : [];
      }
      return [`status ${status} is not a response of ${op.operationId} (listed: ${op.statuses.join(', ')})`];
    }
    const operation = this.document.paths[op.path]![op.method.toLowerCase()] as { responses: Record<string, { $ref?: string }> };
    const rawResponse = operation.responses[String(status)]!;
    const response = this.resolve(rawResponse as { content?: Record<string, unknown>; $ref?: string });
    const schemaOf = (type: string) =>
      rawResponse.$ref
        ? pointer(...refParts(rawResponse.$ref), 'content', type, 'schema')
        : pointer('paths', op.path, op.method.toLowerCase(), 'responses', String(status), 'content', type, 'schema');
    if (mediaType !== 'application/json') {
      // Another representation the client asked for (e.g. the bare SHA of a commit): its own schema.
      if (!response?.content?.[mediaType]) return [`${op.operationId} ${status} has no ${mediaType} representation in the description`];
      const error = this.checkValue(`${op.operationId}:${status}:${mediaType}`, schemaOf(mediaType), body);
      return error ? [`response ${status} (${mediaType}) body: ${error}`] : [];
    }
    const hasJson = !!response?.content?.['application/json'];
    if (!hasJson) {
      if (body === undefined || body === '') return [];
      // The description omits the body of some error answers (409 of create-deployment);
      // GitHub still sends its usual error object.
      if (status >= 400) {
        const error = this.checkValue('basic-error', pointer('components', 'schemas', 'basic-error'), body);
        return error ? [`error response ${status}: ${error}`] : [];
      }
      return [`${op.operationId} ${status} has no body in the description, but one was sent`];
    }
    const ref = schemaOf('application/json');
    const error = this.checkValue(`${op.operationId}:${status}`, ref, body);
    return error ? [`response ${status} body: ${error}`] : [];
  }

  /** Problems with a webhook payload, checked against the description's `x-webhooks` entry (e.g. `pull-request-opened`). */
  checkWebhook(name: string, payload: unknown): string[] {
    const error = this.checkValue(
      `webhook:${name}`,
      pointer('x-webhooks', name, 'post', 'requestBody', 'content', 'application/json', 'schema'),
      payload,
    );
    return error ? [`webhook ${name}: ${error}`] : [];
  }
}

function anchorRefs(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(anchorRefs);
  if (node === null || typeof node !== 'object') return node;
  return Object.fromEntries(
    Object.entries(node).map(([k, v]) => [
      k,
      k === '$ref' && typeof v === 'string' && v.startsWith('#/') ? `${schemaId}${v}` : anchorRefs(v),
    ]),
  );
}

/** Query and path values arrive as strings; the description types them. */
function coerceParameter(raw: string, schema: Record<string, unknown>): unknown {
  const type = schema.type ?? (schema.anyOf as Record<string, unknown>[] | undefined)?.find((s) => s.type !== 'null')?.type;
  if (type === 'integer' || type === 'number') return /^-?\d+(\.\d+)?$/.test(raw) ? Number(raw) : raw;
  if (type === 'boolean') return raw === 'true' ? true : raw === 'false' ? false : raw;
  if (type === 'array') return raw.split(',');
  return raw;
}

let shared: OpenApiContract | undefined;

/** GitHub.com's description (the one GHES follows closely for these endpoints), loaded once. */
export function githubContract(): OpenApiContract {
  if (!shared) {
    const require = createRequire(import.meta.url);
    shared = new OpenApiContract(require.resolve('@octokit/openapi/generated/api.github.com.json'));
  }
  return shared;
}
