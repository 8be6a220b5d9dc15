// The shape of a rendering — how many objects, how many bytes of JSON, how deeply nested —
// measured before anything clones, stringifies or walks it recursively: a 20,000-level nested
// answer overflows the stack of `structuredClone` and `JSON.stringify`, and 20,000 objects would
// become 20,000 API requests. One iterative pass that stops at the first limit crossed, so its
// cost is bounded by the limits, not by what the repository produced.

export interface OutputLimits {
  /** Nesting of arrays and objects, the outermost value counting as 1. */
  maxDepth: number;
  /** Objects in the rendering. */
  maxObjects: number;
  /** Bytes of the rendering as JSON. */
  maxBytes: number;
  /** Bytes of one object as JSON. */
  maxObjectBytes: number;
}

/** Far above what a preview needs (the example renders 14 objects, about 7 KiB of JSON). */
export const defaultOutputLimits: Readonly<OutputLimits> = Object.freeze({
  maxDepth: 64,
  maxObjects: 500,
  maxBytes: 4 * 1024 * 1024,
  maxObjectBytes: 512 * 1024,
});

export type OutputLimit = 'depth' | 'objects' | 'bytes' | 'object-bytes';

export interface OutputShapeProblem {
  limit: OutputLimit;
  message: string;
}

type Json = Record<string, unknown>;

const isContainer = (value: unknown): value is Json | unknown[] => typeof value === 'object' && value !== null;

/** The list of objects: the value itself, or the `manifests` of an answer that carries them. */
function objectsOf(value: unknown): unknown[] | undefined {
  if (Array.isArray(value)) return value;
  const manifests = isContainer(value) ? (value as Json).manifests : undefined;
  return Array.isArray(manifests) ? manifests : undefined;
}

/** Bytes of a string as JSON (UTF-8, quotes and escapes), or more than `atMost` (then not exact). */
function stringBytes(text: string, atMost: number): number {
  // Every UTF-16 unit is at least one byte: a string longer than the budget is over it unread.
  if (text.length > atMost) return text.length;
  let bytes = 2;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c < 0x20) bytes += c === 8 || c === 9 || c === 10 || c === 12 || c === 13 ? 2 : 6;
    else if (c === 0x22 || c === 0x5c) bytes += 2;
    else if (c < 0x80) bytes += 1;
    else if (c < 0x800 || (c >= 0xd800 && c < 0xe000))
      bytes += 2; // a surrogate pair is 4 bytes
    else bytes += 3;
  }
  return bytes;
}

function scalarBytes(value: unknown, atMost: number): number {
  if (typeof value === 'string') return stringBytes(value, atMost);
  if (typeof value === 'number') return Number.isFinite(value) ? String(value).length : 4;
  if (typeof value === 'boolean') return value ? 4 : 5;
  if (value === null) return 4;
  if (typeof value === 'bigint') return String(value).length;
  return 0; // undefined, functions and symbols are left out of JSON
}

function describe(object: unknown, index: number): string {
  const o = isContainer(object) ? (object as Json) : {};
  const metadata = isContainer(o.metadata) ? (o.metadata as Json) : {};
  const kind = typeof o.kind === 'string' ? o.kind.slice(0, 64) : '?';
  const name = typeof metadata.name === 'string' ? metadata.name.slice(0, 253) : '?';
  return `object ${index} (${kind} ${name})`;
}

function formatBytes(bytes: number): string {
  if (bytes % (1024 * 1024) === 0) return `${bytes / (1024 * 1024)} MiB`;
  if (bytes % 1024 === 0) return `${bytes / 1024} KiB`;
  return `${bytes} bytes`;
}

/**
 * The first limit `value` crosses, or undefined. `value` is a list of objects or an answer
 * carrying them in `manifests`; anything else is measured for depth and bytes only.
 */
export function findOutputShapeProblem(value: unknown, limits: OutputLimits): OutputShapeProblem | undefined {
  const objects = objectsOf(value);
  if (objects && objects.length > limits.maxObjects) {
    return { limit: 'objects', message: `the rendering has ${objects.length} objects; at most ${limits.maxObjects} are allowed` };
  }
  const perObject = new Array<number>(objects?.length ?? 0).fill(0);
  let total = 0;
  // Depth-first with an explicit stack: [value, depth, index of the object it belongs to or -1].
  const stack: [unknown, number, number][] = [[value, 1, -1]];
  while (stack.length > 0) {
    const [current, depth, owner] = stack.pop()!;
    const budget = Math.min(limits.maxBytes - total, owner < 0 ? Infinity : limits.maxObjectBytes - perObject[owner]!);
    let bytes: number;
    if (!isContainer(current)) {
      bytes = scalarBytes(current, budget);
    } else {
      if (depth > limits.maxDepth) {
        const where = owner < 0 ? '' : ` in ${describe(objects![owner], owner)}`;
        return { limit: 'depth', message: `the rendering is nested deeper than ${limits.maxDepth} levels${where}` };
      }
      const keys = Array.isArray(current) ? undefined : Object.keys(current);
      const count = keys ? keys.length : (current as unknown[]).length;
      bytes = 2 + Math.max(0, count - 1); // brackets and commas
      // Stop adding children once the budget is spent: what follows is refused anyway.
      for (let i = count - 1; i >= 0 && bytes <= budget; i--) {
        const child = keys ? (current as Json)[keys[i]!] : (current as unknown[])[i];
        if (keys) bytes += stringBytes(keys[i]!, budget) + 1;
        stack.push([child, depth + 1, current === objects ? i : owner]);
      }
    }
    total += bytes;
    if (owner >= 0) {
      perObject[owner]! += bytes;
      if (perObject[owner]! > limits.maxObjectBytes) {
        return {
          limit: 'object-bytes',
          message: `${describe(objects![owner], owner)} is larger than ${formatBytes(limits.maxObjectBytes)} of JSON`,
        };
      }
    }
    if (total > limits.maxBytes) return { limit: 'bytes', message: `the rendering is larger than ${formatBytes(limits.maxBytes)} of JSON` };
  }
  return undefined;
}

/** undefined when `value` is within the limits; else what it crosses, as a sentence for the author. */
export function checkOutputShape(value: unknown, limits: OutputLimits): string | undefined {
  return findOutputShapeProblem(value, limits)?.message;
}
