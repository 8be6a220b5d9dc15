// Conditional requests: a GET whose response carried an ETag is sent again with
// If-None-Match; GitHub answers 304 when nothing changed, which costs no rate limit, and
// the client returns the cached response as if it had been sent again.
import type { OctokitPlugin } from './octokit-rate-limit.js';

export interface ConditionalRequestStats {
  /** GETs answered 304 and served from the cache. */
  notModified: number;
  /** GETs answered with a (new) body. */
  modified: number;
}

export interface ConditionalRequestOptions {
  /** Cached responses per client (least recently used evicted first). */
  maxEntries: number;
}

/**
 * GETs of git objects named by their SHA (blobs, trees, commits, contents at a commit): the
 * answer can never change, so a revalidation would only cost a request, and their callers keep
 * what they read by SHA already (GitHubPreviewFiles). Kept here, a blob of up to 1 MiB per entry
 * would sit in memory twice.
 */
const sha = '[0-9a-f]{40}(?:[0-9a-f]{24})?';
const contentAddressed = new RegExp(
  `/git/(?:blobs|trees|commits)/${sha}(?:$|[?])|/commits/${sha}(?:$|[?])|/contents/[^?]*[?](?:.*&)?ref=${sha}(?:$|&)`,
  'i',
);

/** Whether a GET's answer is fixed by the SHA in its URL (no conditional request, nothing cached). */
export function isContentAddressed(url: string): boolean {
  return contentAddressed.test(url);
}

interface CachedResponse {
  etag: string;
  response: { status: number; url: string; headers: Record<string, unknown>; data: unknown };
}

export function conditionalRequests(
  octokit: Parameters<OctokitPlugin>[0],
  options: Parameters<OctokitPlugin>[1],
): { conditionalRequestStats: ConditionalRequestStats } {
  const settings = options.conditionalRequests as ConditionalRequestOptions | undefined;
  const stats: ConditionalRequestStats = { notModified: 0, modified: 0 };
  if (!settings || settings.maxEntries <= 0) return { conditionalRequestStats: stats };
  const cache = new Map<string, CachedResponse>();

  octokit.hook.wrap('request', async (request, requestOptions) => {
    const headers = requestOptions.headers as Record<string, string | undefined>;
    if (requestOptions.method !== 'GET' || headers['if-none-match'] !== undefined || headers['if-modified-since'] !== undefined) {
      return request(requestOptions);
    }
    // The representation depends on the URL and the media type asked for.
    const { url } = octokit.request.endpoint.parse(requestOptions);
    if (isContentAddressed(url)) return request(requestOptions);
    const key = `${headers.accept ?? ''} ${url}`;
    const cached = cache.get(key);
    if (cached) headers['if-none-match'] = cached.etag;
    try {
      const response = await request(requestOptions);
      const etag = (response.headers as Record<string, unknown>).etag;
      cache.delete(key);
      if (typeof etag === 'string') {
        cache.set(key, { etag, response: response as CachedResponse['response'] });
        if (cache.size > settings.maxEntries) cache.delete(cache.keys().next().value!);
      }
      stats.modified += 1;
      return response;
    } catch (err) {
      const error = err as { status?: number; response?: { headers?: Record<string, unknown> } };
      if (!cached || error.status !== 304) throw err;
      stats.notModified += 1;
      cache.delete(key);
      cache.set(key, cached);
      // Fresh rate-limit headers; the cached body (a copy: callers may change what they get)
      // and the rest of the cached headers (Link, for pagination).
      const fresh = Object.fromEntries(
        Object.entries(error.response?.headers ?? {}).filter(([name]) => name.startsWith('x-ratelimit-') || name === 'date'),
      );
      return {
        ...cached.response,
        headers: { ...cached.response.headers, ...fresh },
        data: structuredClone(cached.response.data),
      } as Awaited<ReturnType<typeof request>>;
    }
  });
  return { conditionalRequestStats: stats };
}
