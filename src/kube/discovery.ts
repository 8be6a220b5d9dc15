// Kinds are resolved to REST paths through the API server's discovery documents, so a
// CRD works exactly like a built-in kind. Documents are cached per group/version; a miss
// refetches once (a CRD may just have been installed).
import { NoKindMatchError, NotFoundError } from './errors.js';
import { groupOf, type KindRef } from './kube-object.js';

/** How the API server serves one kind. */
export interface ResourceInfo {
  apiVersion: string;
  group: string;
  version: string;
  kind: string;
  /** The plural REST name, e.g. `deployments`. */
  resource: string;
  namespaced: boolean;
  verbs: string[];
  /** e.g. `['status', 'scale']`. */
  subresources: string[];
}

interface ApiResource {
  name: string;
  kind: string;
  namespaced: boolean;
  verbs?: string[];
}

/** What discovery needs from the client: a GET that returns parsed JSON. */
export type DiscoveryGet = (path: string) => Promise<unknown>;

interface Entry {
  fetchedAt: number;
  byKind: Map<string, ResourceInfo> | undefined;
}

export class Discovery {
  private readonly cache = new Map<string, Promise<Entry>>();

  /** @param refetchAfterMs a miss triggers a refetch only if the cached document is at least this old. */
  constructor(
    private readonly get: DiscoveryGet,
    private readonly refetchAfterMs = 500,
  ) {}

  /** The REST resource serving `kind`; throws `NoKindMatchError` when the server does not serve it. */
  async resolve(kind: KindRef): Promise<ResourceInfo> {
    let entry = await this.entry(kind.apiVersion);
    let info = entry.byKind?.get(kind.kind);
    if (!info && Date.now() - entry.fetchedAt >= this.refetchAfterMs) {
      this.cache.delete(kind.apiVersion);
      entry = await this.entry(kind.apiVersion);
      info = entry.byKind?.get(kind.kind);
    }
    if (!info) throw new NoKindMatchError(kind.apiVersion, kind.kind);
    return info;
  }

  /** Whether the server serves `kind` (e.g. is cert-manager installed?). */
  async has(kind: KindRef): Promise<boolean> {
    try {
      await this.resolve(kind);
      return true;
    } catch (err) {
      if (err instanceof NoKindMatchError) return false;
      throw err;
    }
  }

  /** Forgets cached documents (one group/version, or all), e.g. after installing CRDs. */
  invalidate(apiVersion?: string): void {
    if (apiVersion) this.cache.delete(apiVersion);
    else this.cache.clear();
  }

  private entry(apiVersion: string): Promise<Entry> {
    let pending = this.cache.get(apiVersion);
    if (!pending) {
      pending = this.fetch(apiVersion);
      this.cache.set(apiVersion, pending);
      // A failed fetch (network, 5xx) must not be cached.
      pending.catch(() => this.cache.delete(apiVersion));
    }
    return pending;
  }

  private async fetch(apiVersion: string): Promise<Entry> {
    const group = groupOf(apiVersion);
    const version = group ? apiVersion.slice(group.length + 1) : apiVersion;
    const path = group ? `/apis/${group}/${version}` : `/api/${version}`;
    let list: { resources?: ApiResource[] };
    try {
      list = (await this.get(path)) as { resources?: ApiResource[] };
    } catch (err) {
      if (err instanceof NotFoundError) return { fetchedAt: Date.now(), byKind: undefined };
      throw err;
    }
    const resources = list.resources ?? [];
    const byKind = new Map<string, ResourceInfo>();
    for (const r of resources) {
      if (r.name.includes('/')) continue;
      const subresources = resources.filter((s) => s.name.startsWith(`${r.name}/`)).map((s) => s.name.slice(r.name.length + 1));
      byKind.set(r.kind, {
        apiVersion,
        group,
        version,
        kind: r.kind,
        resource: r.name,
        namespaced: r.namespaced,
        verbs: r.verbs ?? [],
        subresources,
      });
    }
    return { fetchedAt: Date.now(), byKind };
  }
}

/** The REST path of a resource: a collection (no name), an object, or an object's subresource. */
export function resourcePath(info: ResourceInfo, where: { namespace?: string; name?: string; subresource?: string }): string {
  const base = info.group ? `/apis/${info.group}/${info.version}` : `/api/${info.version}`;
  let path = base;
  if (info.namespaced && where.namespace) path += `/namespaces/${encodeURIComponent(where.namespace)}`;
  path += `/${info.resource}`;
  if (where.name !== undefined) path += `/${encodeURIComponent(where.name)}`;
  if (where.subresource) path += `/${where.subresource}`;
  return path;
}
