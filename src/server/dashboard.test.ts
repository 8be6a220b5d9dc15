// The dashboard's HTTP side over an in-memory cache: pages, the live stream and its resumption,
// the Events of an environment page, and that nothing but GET is served. The browser test is
// test/integration/dashboard-browser.test.ts.
import assert from 'node:assert/strict';
import { after, test } from 'node:test';
import { createServer } from './create-server.js';
import { Dashboard } from './dashboard.js';
import type { DashboardSource } from './dashboard-feed.js';
import type { DashboardObject } from './dashboard-view.js';
import { startServer } from './start-server.js';

type Handler = Parameters<DashboardSource['addHandler']>[0];

class MemorySource implements DashboardSource {
  private readonly objects = new Map<string, DashboardObject>();
  private readonly handlers = new Set<Handler>();
  private rv = 0;
  list() {
    return [...this.objects.values()];
  }
  get(name: string) {
    return this.objects.get(name);
  }
  addHandler(handler: Handler) {
    this.handlers.add(handler);
    return () => void this.handlers.delete(handler);
  }
  put(name: string, phase: string, repository = 'shop') {
    const old = this.objects.get(name);
    const obj: DashboardObject = {
      metadata: { name, creationTimestamp: `2026-01-02T03:04:0${this.objects.size % 10}Z`, resourceVersion: String(++this.rv) },
      spec: { repository: { owner: 'acme', name: repository }, pullRequest: { number: 1, headRef: 'f' } },
      status: { phase, namespace: name },
    };
    this.objects.set(name, obj);
    for (const h of this.handlers) {
      if (old) h.onUpdate?.(old, obj);
      else h.onAdd?.(obj);
    }
  }
  remove(name: string) {
    const old = this.objects.get(name)!;
    this.objects.delete(name);
    for (const h of this.handlers) h.onDelete?.(old);
  }
}

const source = new MemorySource();
const eventReads: string[] = [];
const dashboard = new Dashboard({
  environments: source,
  githubApiUrl: 'https://api.github.com',
  refreshMs: 100,
  client: {
    request: async <T>(req: { path: string; query?: Record<string, unknown> }) => {
      eventReads.push(`${req.path}?${String(req.query?.fieldSelector ?? '')}`);
      return {
        items: [
          {
            type: 'Warning',
            reason: 'BackOff',
            message: 'pulling <image>',
            involvedObject: { kind: 'Pod', name: 'web-0' },
            lastTimestamp: '2026-01-02T03:04:05Z',
          },
        ],
      } as T;
    },
  },
});
const server = await startServer(createServer({ routers: [dashboard.router()] }));
after(async () => {
  dashboard.close();
  await server.close();
});

/** Reads server-sent events until `until` is satisfied by the events seen so far. */
type StreamEvent = { event: string; id?: string; data: { name?: string; html?: string } };

async function readEvents(
  path: string,
  until: (events: StreamEvent[]) => boolean,
  headers: Record<string, string> = {},
): Promise<StreamEvent[]> {
  const abort = new AbortController();
  const res = await fetch(`${server.url}${path}`, { headers, signal: abort.signal });
  assert.equal(res.headers.get('content-type'), 'text/event-stream; charset=utf-8');
  const reader = res.body!.pipeThrough(new TextDecoderStream()).getReader();
  const events: StreamEvent[] = [];
  let buffer = '';
  const deadline = setTimeout(() => abort.abort(), 5000);
  try {
    while (!until(events)) {
      const { value, done } = await reader.read();
      if (done) break;
      buffer += value;
      let end;
      while ((end = buffer.indexOf('\n\n')) >= 0) {
        const block = buffer.slice(0, end);
        buffer = buffer.slice(end + 2);
        const field = (name: string) =>
          block
            .split('\n')
            .find((l) => l.startsWith(`${name}: `))
            ?.slice(name.length + 2);
        const event = field('event');
        if (event) events.push({ event, ...(field('id') ? { id: field('id') } : {}), data: JSON.parse(field('data')!) });
      }
    }
  } finally {
    clearTimeout(deadline);
    abort.abort();
  }
  return events;
}

test('the list page: every environment, newest first, filters, and the stream to follow it from', async () => {
  source.put('pr-1-shop', 'Ready');
  source.put('pr-2-shop', 'Failed');
  source.put('pr-3-blog', 'Deploying', 'blog');
  const res = await fetch(server.url);
  assert.equal(res.status, 200);
  assert.match(res.headers.get('content-security-policy')!, /script-src 'self'/);
  const html = await res.text();
  assert.deepEqual(
    [...html.matchAll(/<tr data-name="([^"]+)"/g)].map((m) => m[1]),
    ['pr-3-blog', 'pr-2-shop', 'pr-1-shop'],
  );
  const filtered = await (await fetch(`${server.url}/?repository=acme/shop&phase=Failed`)).text();
  assert.deepEqual(
    [...filtered.matchAll(/<tr data-name="([^"]+)"/g)].map((m) => m[1]),
    ['pr-2-shop'],
  );
  assert.match(filtered, /data-stream="\/events\?repository=acme%2Fshop&amp;phase=Failed&amp;since=[0-9a-f]+%3A\d+"/);
  assert.equal((await fetch(`${server.url}/assets/dashboard.js`)).headers.get('content-type'), 'text/javascript; charset=utf-8');
});

test('a change made between the page and its stream is sent; a filtered-out change removes the row', async () => {
  const html = await (await fetch(`${server.url}/?phase=Ready`)).text();
  const stream = /data-stream="([^"]+)"/.exec(html)![1]!.replace(/&amp;/g, '&');
  source.put('pr-4-shop', 'Ready');
  source.put('pr-1-shop', 'Failed');
  const events = await readEvents(stream, (e) => e.length >= 2);
  assert.deepEqual(
    events.map((e) => [e.event, e.data.name]),
    [
      ['upsert', 'pr-4-shop'],
      ['remove', 'pr-1-shop'],
    ],
  );
  assert.match(events[0]!.data.html!, /^<tr data-name="pr-4-shop"/);
});

test('live: changes after the stream opened, a deletion, and a resumption from Last-Event-ID', async () => {
  const live = readEvents('/events', (e) => e.length >= 2);
  await new Promise((r) => setTimeout(r, 100));
  source.put('pr-5-shop', 'Deploying');
  source.remove('pr-5-shop');
  const events = await live;
  assert.deepEqual(
    events.map((e) => [e.event, e.data.name]),
    [
      ['upsert', 'pr-5-shop'],
      ['remove', 'pr-5-shop'],
    ],
  );
  const lastId = events[1]!.id!;
  source.put('pr-6-shop', 'Ready');
  const resumed = await readEvents('/events', (e) => e.length >= 1, { 'last-event-id': lastId });
  assert.deepEqual(
    resumed.map((e) => [e.event, e.data.name]),
    [['upsert', 'pr-6-shop']],
  );
  const stale = await readEvents('/events?since=another-process:3', (e) => e.length >= 1);
  assert.deepEqual(
    stale.map((e) => e.event),
    ['reload'],
  );
});

test('an environment page: its facts and Events, live; an unknown one is 404', async () => {
  const res = await fetch(`${server.url}/environments/pr-2-shop`);
  assert.equal(res.status, 200);
  const html = await res.text();
  assert.match(html, /pulling &lt;image&gt;/);
  assert.ok(eventReads.includes('/api/v1/namespaces/default/events?involvedObject.kind=PreviewEnvironment,involvedObject.name=pr-2-shop'));
  assert.ok(eventReads.includes('/api/v1/namespaces/pr-2-shop/events?'));
  const events = readEvents('/events?environment=pr-2-shop', (e) => e.length >= 2);
  await new Promise((r) => setTimeout(r, 100));
  source.put('pr-2-shop', 'Ready');
  const details = await events;
  assert.match(details[0]!.data.html!, /phase-failed/);
  assert.match(details[1]!.data.html!, /phase-ready/);
  assert.equal((await fetch(`${server.url}/environments/nope`)).status, 404);
});

test('read-only: nothing but GET is served', async () => {
  for (const method of ['POST', 'PUT', 'DELETE', 'PATCH']) {
    assert.equal((await fetch(`${server.url}/`, { method })).status, 404, method);
    assert.equal((await fetch(`${server.url}/environments/pr-2-shop`, { method })).status, 404, method);
  }
});
