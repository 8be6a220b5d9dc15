// Validation of a repository's `.preview/preview.yaml`: YAML syntax, the JSON Schema the
// construct library publishes, then the cross-field rules a schema cannot express. Every
// error is reported (not just the first) with its JSON Pointer path and, when the text is
// at hand, its line and column, so that a PR comment can tell the author exactly what to fix.
import { Ajv, type ErrorObject } from 'ajv';
import { LineCounter, isNode, parseDocument, type Document } from 'yaml';
import { algorithmObjectNames, databaseObjectNames, previewConfigSchema, type PreviewConfig } from '../../constructs/index.js';
import { deepFreeze } from './deep-freeze.js';

export interface PreviewConfigError {
  /** JSON Pointer to the offending value, e.g. `/algorithms/0/image`; `''` for the whole file. */
  path: string;
  message: string;
  /** 1-based position in the YAML text, when known. */
  line?: number;
  column?: number;
}

export type PreviewConfigValidation = { ok: true; config: PreviewConfig } | { ok: false; errors: PreviewConfigError[] };

const ajv = new Ajv({ allErrors: true, strict: true, verbose: true });
const validateSchema = ajv.compile(previewConfigSchema);

/**
 * The configurations kept: of the last 32 valid texts, each of at most 16 KiB (a preview.yaml is
 * about 1 KiB; a repository may push up to 1 MiB, which is parsed every time rather than held).
 * Refusals are not kept: a short text with YAML aliases can make tens of thousands of errors.
 */
const recentLimit = 32;
const recentMaxLength = 16 * 1024;
const recent = new Map<string, PreviewConfigValidation>();

/**
 * Parses and validates the text of `.preview/preview.yaml`. A valid text seen lately is not parsed
 * again (in a burst of pull requests, parsing was 1.6 % of the operator's CPU): a valid
 * configuration is frozen, as it may be shared with every other caller of the same text.
 */
export function validatePreviewConfig(yamlText: string): PreviewConfigValidation {
  const known = recent.get(yamlText);
  if (known) {
    recent.delete(yamlText); // re-inserted last: the least recently used goes first
    recent.set(yamlText, known);
    return known;
  }
  const result = parseAndValidate(yamlText);
  if (!result.ok) return result;
  deepFreeze(result);
  if (yamlText.length <= recentMaxLength) recent.set(yamlText, result);
  if (recent.size > recentLimit) recent.delete(recent.keys().next().value!);
  return result;
}

function parseAndValidate(yamlText: string): PreviewConfigValidation {
  const lineCounter = new LineCounter();
  const doc = parseDocument(yamlText, { lineCounter, prettyErrors: false, uniqueKeys: true });
  if (doc.errors.length > 0) {
    return {
      ok: false,
      errors: doc.errors.map((error) => ({
        path: '',
        message: `YAML syntax: ${error.message.split('\n')[0]}`,
        line: lineCounter.linePos(error.pos[0]).line,
        column: lineCounter.linePos(error.pos[0]).col,
      })),
    };
  }
  let value: unknown;
  try {
    // A bounded alias expansion: a "billion laughs" document must not exhaust the operator.
    value = doc.toJS({ maxAliasCount: 100 });
  } catch (err) {
    return { ok: false, errors: [{ path: '', message: `YAML: ${(err as Error).message}` }] };
  }
  const result = validatePreviewConfigValue(value);
  if (result.ok) return result;
  const located = result.errors.map((error) => ({ ...error, ...positionOf(doc, lineCounter, error.path) }));
  // In reading order, as an author fixes them.
  located.sort((a, b) => (a.line ?? 0) - (b.line ?? 0) || (a.column ?? 0) - (b.column ?? 0));
  return { ok: false, errors: located };
}

/**
 * Validates an already parsed configuration (e.g. one assembled from a base branch's file
 * and the values a policy lets an untrusted PR change).
 */
export function validatePreviewConfigValue(value: unknown): PreviewConfigValidation {
  if (value === null || value === undefined) {
    return { ok: false, errors: [{ path: '', message: 'the file is empty; it must be a mapping (at least `version: 1`)' }] };
  }
  const errors: PreviewConfigError[] = [];
  if (!validateSchema(value)) errors.push(...schemaErrors(validateSchema.errors ?? []));
  errors.push(...crossFieldErrors(value));
  if (errors.length > 0) return { ok: false, errors: dedupe(errors) };
  return { ok: true, config: value as PreviewConfig };
}

/** One line per error, `file:line:column path: message`, for conditions, Events and PR comments. */
export function formatPreviewConfigErrors(errors: readonly PreviewConfigError[], file = '.preview/preview.yaml'): string {
  return errors
    .map((error) => {
      const where = error.line !== undefined ? `${file}:${error.line}:${error.column ?? 1}` : file;
      return `${where} ${error.path || '(document)'}: ${error.message}`;
    })
    .join('\n');
}

const typeNames: Record<string, string> = {
  string: 'a string',
  integer: 'an integer',
  number: 'a number',
  boolean: 'true or false',
  object: 'a mapping',
  array: 'a list',
};

function schemaErrors(errors: readonly ErrorObject[]): PreviewConfigError[] {
  const out: PreviewConfigError[] = [];
  for (const error of errors) {
    const described = (error.parentSchema as { description?: string } | undefined)?.description;
    switch (error.keyword) {
      case 'required':
        out.push({ path: `${error.instancePath}/${escape(String(error.params.missingProperty))}`, message: 'is required' });
        break;
      case 'additionalProperties': {
        const field = String(error.params.additionalProperty);
        const known = Object.keys((error.parentSchema as { properties?: object } | undefined)?.properties ?? {});
        const suggestion = closest(field, known);
        out.push({
          path: `${error.instancePath}/${escape(field)}`,
          message: `is not a known field${suggestion ? ` (did you mean "${suggestion}"?)` : ''}; known fields: ${known.join(', ')}`,
        });
        break;
      }
      case 'propertyNames':
        // The keyword's own summary; the specific reason is reported by the nested error.
        break;
      case 'type':
        out.push({ path: error.instancePath, message: `must be ${typeNames[String(error.params.type)] ?? error.params.type}` });
        break;
      case 'enum':
        out.push({ path: error.instancePath, message: `must be one of: ${(error.params.allowedValues as unknown[]).join(', ')}` });
        break;
      case 'const':
        out.push({ path: error.instancePath, message: `must be ${JSON.stringify(error.params.allowedValue)}` });
        break;
      default: {
        // Errors inside propertyNames are about a key: report them at that key.
        const propertyName = error.propertyName;
        const path = propertyName !== undefined ? `${error.instancePath}/${escape(propertyName)}` : error.instancePath;
        const what = propertyName !== undefined ? 'the name ' : '';
        const message =
          error.keyword === 'pattern' && described ? `${what}must be ${described}` : `${what}${error.message ?? 'is invalid'}`;
        out.push({ path, message });
      }
    }
  }
  return out;
}

type Loose = Record<string, unknown>;
const isObject = (value: unknown): value is Loose => typeof value === 'object' && value !== null && !Array.isArray(value);
const list = (value: unknown): unknown[] => (Array.isArray(value) ? value : []);
const int = (value: unknown): number | undefined => (Number.isInteger(value) ? (value as number) : undefined);

/** The rules that relate fields to each other (the CRDs enforce the same with CEL). */
function crossFieldErrors(value: unknown): PreviewConfigError[] {
  if (!isObject(value)) return [];
  const algorithms = list(value.algorithms);
  return [...algorithmErrors(algorithms), ...nameClashErrors(algorithms, list(value.databases)), ...gpuBudgetErrors(value, algorithms)];
}

/** Each algorithm's replicas within its scaling bounds, and an ingress path of its own. */
function algorithmErrors(algorithms: readonly unknown[]): PreviewConfigError[] {
  const errors: PreviewConfigError[] = [];
  const exposedPaths = new Map<string, number>();
  algorithms.forEach((algorithm, i) => {
    if (!isObject(algorithm)) return;
    const at = `/algorithms/${i}`;
    errors.push(...scalingErrors(algorithm, at));
    if (algorithm.expose === false) return;
    const path = typeof algorithm.path === 'string' ? algorithm.path : '/';
    const first = exposedPaths.get(path);
    if (first === undefined) {
      exposedPaths.set(path, i);
    } else {
      errors.push({
        path: `${at}/path`,
        message: `"${path}" is already routed to /algorithms/${first}; give each exposed algorithm its own path (or expose: false)`,
      });
    }
  });
  return errors;
}

function scalingErrors(algorithm: Loose, at: string): PreviewConfigError[] {
  const scaling = isObject(algorithm.scaling) ? algorithm.scaling : undefined;
  const min = int(scaling?.minReplicas) ?? 1;
  const max = int(scaling?.maxReplicas);
  if (!scaling || max === undefined) return [];
  if (min > max) return [{ path: `${at}/scaling/minReplicas`, message: `(${min}) must be less than or equal to maxReplicas (${max})` }];
  const replicas = int(algorithm.replicas) ?? 1;
  if (replicas < min || replicas > max) {
    return [{ path: `${at}/replicas`, message: `(${replicas}) must lie within scaling.minReplicas..maxReplicas (${min}..${max})` }];
  }
  return [];
}

/**
 * Every object name the operator will create, by kind, and which entry caused it; a clash
 * is reported once per pair of entries, listing the objects both would create.
 */
class ObjectNameClaims {
  private readonly claimed = new Map<string, string>();
  private readonly clashes = new Map<string, { path: string; other: string; objects: string[] }>();

  /** `owner` (e.g. `/algorithms/0 (fraud)`), whose name at `namePath` gives it `objects`, as [kind, name]. */
  claim(owner: string, namePath: string, objects: ReadonlyArray<readonly [kind: string, name: string]>): void {
    for (const [kind, name] of objects) {
      const key = `${kind}/${name}`;
      const first = this.claimed.get(key);
      if (first === undefined) {
        this.claimed.set(key, owner);
      } else if (first !== owner) {
        const clashKey = `${namePath}\u0000${first}`;
        const clash = this.clashes.get(clashKey) ?? { path: namePath, other: first, objects: [] };
        clash.objects.push(`${kind} "${name}"`);
        this.clashes.set(clashKey, clash);
      }
    }
  }

  errors(): PreviewConfigError[] {
    return [...this.clashes.values()].map((clash) => ({
      path: clash.path,
      message: `would create ${clash.objects.join(', ')}, which ${clash.other} creates too`,
    }));
  }
}

function nameClashErrors(algorithms: readonly unknown[], databases: readonly unknown[]): PreviewConfigError[] {
  const claims = new ObjectNameClaims();
  algorithms.forEach((algorithm, i) => {
    if (!isObject(algorithm) || typeof algorithm.name !== 'string') return;
    const at = `/algorithms/${i}`;
    const names = algorithmObjectNames(algorithm.name);
    claims.claim(`${at} (${algorithm.name})`, `${at}/name`, [
      ['Algorithm', algorithm.name],
      ['Deployment', names.stable],
      ['Deployment', names.canary],
      ['Service', names.service],
      ['ConfigMap', names.config],
      ['ConfigMap', names.env],
    ]);
  });
  databases.forEach((database, i) => {
    if (!isObject(database) || typeof database.name !== 'string') return;
    const at = `/databases/${i}`;
    const names = databaseObjectNames(database.name);
    claims.claim(`${at} (${database.name})`, `${at}/name`, [
      ['Database', database.name],
      ['StatefulSet', names.statefulSet],
      ['Service', names.service],
      ['Service', names.headlessService],
      ['Secret', names.credentialsSecret],
    ]);
  });
  return claims.errors();
}

/** A GPU budget smaller than what the algorithms start with can never become ready. */
function gpuBudgetErrors(value: Loose, algorithms: readonly unknown[]): PreviewConfigError[] {
  const resources = isObject(value.resources) ? value.resources : undefined;
  const gpuBudget = int(resources?.gpu);
  if (gpuBudget === undefined) return [];
  let needed = 0;
  for (const algorithm of algorithms) {
    if (!isObject(algorithm)) continue;
    const gpuCount = isObject(algorithm.resources) ? (int(algorithm.resources.gpuCount) ?? 0) : 0;
    needed += gpuCount * (int(algorithm.replicas) ?? 1);
  }
  if (needed <= gpuBudget) return [];
  return [{ path: '/resources/gpu', message: `(${gpuBudget}) is less than the ${needed} GPUs the algorithms' replicas request` }];
}

function dedupe(errors: PreviewConfigError[]): PreviewConfigError[] {
  const seen = new Set<string>();
  return errors.filter((error) => {
    const key = `${error.path}\u0000${error.message}`;
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}

/** Where in the text a JSON Pointer points: the node itself, or its nearest existing ancestor. */
function positionOf(doc: Document, lineCounter: LineCounter, pointer: string): { line?: number; column?: number } {
  const segments = pointer === '' ? [] : pointer.slice(1).split('/').map(unescape);
  for (let n = segments.length; n >= 0; n--) {
    const node = n === 0 ? doc.contents : doc.getIn(segments.slice(0, n), true);
    if (isNode(node) && node.range) {
      const { line, col } = lineCounter.linePos(node.range[0]);
      return { line, column: col };
    }
  }
  return {};
}

const escape = (segment: string) => segment.replace(/~/g, '~0').replace(/\//g, '~1');
const unescape = (segment: string) => segment.replace(/~1/g, '/').replace(/~0/g, '~');

/** The known field within edit distance 2 of a misspelt one. */
function closest(field: string, known: readonly string[]): string | undefined {
  let best: string | undefined;
  let bestDistance = 3;
  for (const candidate of known) {
    const distance = editDistance(field.toLowerCase(), candidate.toLowerCase());
    if (distance < bestDistance) {
      best = candidate;
      bestDistance = distance;
    }
  }
  return best;
}

function editDistance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    for (let j = 1; j <= b.length; j++) {
      current[j] = Math.min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (a[i - 1] === b[j - 1] ? 0 : 1));
    }
    previous = current;
  }
  return previous[b.length];
}
