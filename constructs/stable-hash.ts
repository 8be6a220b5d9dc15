/**
 * A deterministic 53-bit hash (cyrb53) of a string, as 14 hex digits. Used to notice that
 * content changed (e.g. an env ConfigMap) without pulling a crypto module into the pure
 * library; it is not a security boundary.
 */
export function stableHash(text: string): string {
  let h1 = 0xdeadbeef;
  let h2 = 0x41c6ce57;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    h1 = Math.imul(h1 ^ c, 2654435761);
    h2 = Math.imul(h2 ^ c, 1597334677);
  }
  h1 = Math.imul(h1 ^ (h1 >>> 16), 2246822507) ^ Math.imul(h2 ^ (h2 >>> 13), 3266489909);
  h2 = Math.imul(h2 ^ (h2 >>> 16), 2246822507) ^ Math.imul(h1 ^ (h1 >>> 13), 3266489909);
  const value = 4294967296 * (2097151 & h2) + (h1 >>> 0);
  return value.toString(16).padStart(14, '0');
}

/** The hash of a string map, independent of key order. */
export function stableHashOfMap(map: Readonly<Record<string, string>>): string {
  const canonical = Object.keys(map)
    .sort()
    .map((key) => [key, map[key]]);
  return stableHash(JSON.stringify(canonical));
}
