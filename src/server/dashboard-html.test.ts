import assert from 'node:assert/strict';
import { test } from 'node:test';
import { environmentDetail, environmentRow, escapeHtml, filterForm, relativeTime } from './dashboard-html.js';
import { environmentView, type DashboardObject } from './dashboard-view.js';

const now = Date.parse('2026-01-02T04:04:05Z');
const attack = `"><img src=x onerror="alert(1)"><script>alert(2)</script>'`;

function hostile(): DashboardObject {
  return {
    metadata: { name: 'pr-1-app', creationTimestamp: '2026-01-02T03:04:05Z' },
    spec: {
      repository: { owner: 'acme', name: `app${attack}`, cloneUrl: 'https://github.com/acme/app.git' },
      pullRequest: { number: 1, headSha: 'b'.repeat(40), headRef: attack, baseRef: 'main', author: attack },
    },
    status: {
      phase: 'Failed',
      url: `https://app.example/"><script>alert(3)</script>`,
      conditions: [{ type: attack, status: 'False', reason: attack, message: attack, lastTransitionTime: '2026-01-02T03:04:05Z' }],
      resources: [{ kind: attack, name: attack, ready: false, message: attack }],
    },
  };
}

/** Every tag a fragment opens, by name. */
const tags = (html: string) => [...html.matchAll(/<([a-zA-Z][a-zA-Z0-9-]*)/g)].map((m) => m[1]!.toLowerCase());

test('escapeHtml: the five characters that matter in content and quoted attributes', () => {
  assert.equal(escapeHtml(`<a href="x" title='y'>&</a>`), '&lt;a href=&quot;x&quot; title=&#39;y&#39;&gt;&amp;&lt;/a&gt;');
  assert.equal(escapeHtml(undefined), '');
});

test('a row of hostile text opens no element of its own and keeps the text readable', () => {
  const html = environmentRow(environmentView(hostile(), 'https://github.com'), now);
  assert.equal(tags(html).filter((t) => t === 'img' || t === 'script').length, 0, html);
  assert.ok(html.includes('&lt;img src=x onerror=&quot;alert(1)&quot;&gt;'));
  assert.equal(/\son[a-z]+=/i.test(html.replace(/&quot;|&#39;/g, '')), true, 'the attack text is there, as text');
  // Every attribute value is quoted and free of raw quotes: no attribute can be closed early.
  for (const [, value] of html.matchAll(/=\s*"([^"]*)"/g)) assert.equal(/[<>]/.test(value!), false, value);
});

test('an environment page of hostile text, events included, opens no element of its own', () => {
  const events = {
    events: [{ type: 'Warning', reason: attack, message: attack, object: attack, count: 2, lastSeen: '2026-01-02T04:00:00Z' }],
  };
  const html = environmentDetail(environmentView(hostile(), 'https://github.com'), { ...events, error: attack }, now);
  assert.equal(tags(html).filter((t) => t === 'img' || t === 'script').length, 0);
  assert.ok(html.includes('&lt;script&gt;alert(2)&lt;/script&gt;'));
});

test('a row: links to the environment page, the repository, the PR and the preview; its phase and error', () => {
  const view = environmentView(
    {
      metadata: { name: 'pr-7-shop', creationTimestamp: '2026-01-02T03:04:05Z' },
      spec: { repository: { owner: 'acme', name: 'shop' }, pullRequest: { number: 7, headRef: 'f', author: 'octocat' } },
      status: {
        phase: 'Failed',
        url: 'https://shop-pr-7.preview.example/',
        conditions: [{ type: 'Ready', status: 'False', reason: 'ConfigInvalid', message: 'bad yaml' }],
      },
    },
    'https://github.com',
  );
  const html = environmentRow(view, now);
  const hrefs = [...html.matchAll(/href="([^"]*)"/g)].map((m) => m[1]);
  assert.deepEqual(hrefs, [
    '/environments/pr-7-shop',
    'https://github.com/acme/shop',
    'https://github.com/acme/shop/pull/7',
    'https://github.com/octocat',
    'https://shop-pr-7.preview.example/',
  ]);
  assert.match(html, /<span class="phase phase-failed">Failed<\/span>/);
  assert.match(html, /<strong>ConfigInvalid<\/strong> bad yaml/);
  assert.match(html, /<time datetime="2026-01-02T03:04:05Z" data-age[^>]*>1h<\/time>/);
});

test('the filters keep the selection and escape repository names', () => {
  const html = filterForm(['acme/shop', `a/${attack}`], { repository: 'acme/shop', phase: 'Ready' });
  assert.match(html, /<option value="acme\/shop" selected>acme\/shop<\/option>/);
  assert.match(html, /<option value="Ready" selected>Ready<\/option>/);
  assert.equal(tags(html).includes('img'), false);
});

test('relative times: ages and expiries', () => {
  assert.equal(relativeTime(now - 42_000, now, 'age'), '42s');
  assert.equal(relativeTime(now - 5 * 60_000, now, 'age'), '5m');
  assert.equal(relativeTime(now - 30 * 3_600_000, now, 'age'), '30h');
  assert.equal(relativeTime(now - 3 * 86_400_000, now, 'age'), '3d');
  assert.equal(relativeTime(now + 47 * 3_600_000, now, 'until'), 'in 47h');
  assert.equal(relativeTime(now + 71 * 3_600_000, now, 'until'), 'in 2d');
  assert.equal(relativeTime(now - 120_000, now, 'until'), '2m ago');
});
