// Reading a rendered object without trusting its shape: the policy's checks see whatever a
// repository's code produced, so a field of the wrong type reads as absent, never as a crash.

export type Json = Record<string, unknown>;

export function asObject(value: unknown): Json | undefined {
  return value && typeof value === 'object' && !Array.isArray(value) ? (value as Json) : undefined;
}

/** The entries of a list that are objects (others read as `{}`); `[]` for anything not a list. */
export function asObjects(value: unknown): Json[] {
  return Array.isArray(value) ? value.map((v) => asObject(v) ?? {}) : [];
}

/** A list as strings (non-strings kept as their JSON, so they never match a name); `[]` for anything not a list. */
export function asStrings(value: unknown): string[] {
  return Array.isArray(value) ? value.map((v) => (typeof v === 'string' ? v : (JSON.stringify(v) ?? ''))) : [];
}

/** Present and not empty: a list with entries, a non-empty string or object, or any other value. */
export function isSet(value: unknown): boolean {
  if (value === undefined || value === null || value === '') return false;
  if (Array.isArray(value)) return value.length > 0;
  if (typeof value === 'object') return Object.keys(value).length > 0;
  return true;
}
