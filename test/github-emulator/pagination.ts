// GitHub's page-based pagination: `per_page` (default 30, at most 100), `page` (from 1)
// and a `Link` header with prev/next/last/first, in GitHub's order.

export interface Page<T> {
  items: T[];
  link: string | undefined;
}

export function paginate<T>(all: T[], query: URLSearchParams, selfUrl: string): Page<T> {
  const perPage = Math.min(100, Math.max(1, Number(query.get('per_page') ?? 30) || 30));
  const page = Math.max(1, Math.floor(Number(query.get('page') ?? 1)) || 1);
  const last = Math.max(1, Math.ceil(all.length / perPage));
  const items = all.slice((page - 1) * perPage, page * perPage);
  const urlFor = (n: number) => {
    const q = new URLSearchParams(query);
    q.set('page', String(n));
    return `<${selfUrl}?${q.toString()}>`;
  };
  const rels: string[] = [];
  if (page > 1) rels.push(`${urlFor(Math.min(page - 1, last))}; rel="prev"`);
  if (page < last) rels.push(`${urlFor(page + 1)}; rel="next"`, `${urlFor(last)}; rel="last"`);
  if (page > 1) rels.push(`${urlFor(1)}; rel="first"`);
  return { items, link: rels.length ? rels.join(', ') : undefined };
}
