// Glob patterns for branch names and logins. `*` stays within one path segment so that
// `release/*` means what people expect of branch names; `**` crosses segments.

export interface GlobOptions {
  /** GitHub logins are case-insensitive; branch names are not. */
  caseInsensitive?: boolean;
}

const cache = new Map<string, RegExp>();

/** `*` any run of characters but `/`, `**` any run at all, `?` one character but `/`; the rest is literal. */
export function globToRegExp(pattern: string, options: GlobOptions = {}): RegExp {
  const key = `${options.caseInsensitive ? 'i' : 's'}:${pattern}`;
  let re = cache.get(key);
  if (!re) {
    let source = '';
    for (let i = 0; i < pattern.length; i++) {
      const c = pattern[i]!;
      if (c === '*' && pattern[i + 1] === '*') {
        source += '.*';
        i++;
      } else if (c === '*') {
        source += '[^/]*';
      } else if (c === '?') {
        source += '[^/]';
      } else {
        source += c.replace(/[.+^${}()|[\]\\]/g, '\\$&');
      }
    }
    re = new RegExp(`^${source}$`, options.caseInsensitive ? 'i' : '');
    if (cache.size > 1000) cache.clear();
    cache.set(key, re);
  }
  return re;
}

export function matchesGlob(pattern: string, text: string, options: GlobOptions = {}): boolean {
  return globToRegExp(pattern, options).test(text);
}

export function matchesAnyGlob(patterns: readonly string[], text: string, options: GlobOptions = {}): boolean {
  return patterns.some((p) => matchesGlob(p, text, options));
}
