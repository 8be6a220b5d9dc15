// RFC 7386 JSON merge patches computed from two JSON values, so a write carries only what
// changed and an unchanged value produces no write at all.

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** Structural equality of JSON values (object key order ignored; `undefined` members ignored). */
export function jsonEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (Array.isArray(a) || Array.isArray(b)) {
    if (!Array.isArray(a) || !Array.isArray(b) || a.length !== b.length) return false;
    return a.every((x, i) => jsonEqual(x, b[i]));
  }
  if (isPlainObject(a) && isPlainObject(b)) {
    const ka = Object.keys(a).filter((k) => a[k] !== undefined);
    const kb = Object.keys(b).filter((k) => b[k] !== undefined);
    if (ka.length !== kb.length) return false;
    return ka.every((k) => Object.hasOwn(b, k) && jsonEqual(a[k], b[k]));
  }
  return false;
}

/**
 * The merge patch that turns `from` into `to` (members missing from `to` become null;
 * arrays are replaced whole), or `undefined` when they are already equal.
 */
export function createMergePatch(from: unknown, to: unknown): Json | undefined {
  if (jsonEqual(from, to)) return undefined;
  if (!isPlainObject(from) || !isPlainObject(to)) return (to === undefined ? null : to) as Json;
  const patch: Record<string, Json> = {};
  for (const key of Object.keys(from)) {
    if (from[key] !== undefined && (!Object.hasOwn(to, key) || to[key] === undefined)) patch[key] = null;
  }
  for (const [key, value] of Object.entries(to)) {
    if (value === undefined) continue;
    const sub = createMergePatch(from[key], value);
    if (sub !== undefined) patch[key] = sub;
  }
  return patch;
}
