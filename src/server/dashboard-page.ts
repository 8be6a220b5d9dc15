// The dashboard's page shell, stylesheet and script, as strings: no build step, nothing fetched
// from another origin (a cluster may have no internet). The script only places fragments the
// server rendered (and escaped) and keeps relative times current; the page's Content Security
// Policy lets no other script run, so even text that escaped escaping could not execute.

/** Served with every dashboard page. */
export const dashboardHeaders: Readonly<Record<string, string>> = {
  'content-security-policy':
    "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self'; " +
    "base-uri 'none'; form-action 'self'; frame-ancestors 'none'",
  'x-content-type-options': 'nosniff',
  // Links lead to GitHub and to previews: they need not learn where the dashboard is.
  'referrer-policy': 'no-referrer',
  'cache-control': 'no-store',
};

export const scriptPath = '/assets/dashboard.js';
export const stylePath = '/assets/dashboard.css';

/** A whole page. `body` is HTML already escaped; `stream` is the live stream's URL (absent: no live updates). */
export function pageHtml(title: string, body: string, stream?: string): string {
  const streamAttribute = stream ? ` data-stream="${stream.replace(/&/g, '&amp;').replace(/"/g, '&quot;')}"` : '';
  return (
    '<!doctype html><html lang="en"><head><meta charset="utf-8">' +
    '<meta name="viewport" content="width=device-width, initial-scale=1">' +
    `<title>${title}</title><link rel="stylesheet" href="${stylePath}"><script src="${scriptPath}" defer></script></head>` +
    `<body${streamAttribute}><header><a class="home" href="/">preview-operator</a>` +
    '<span id="live" class="live" title="live updates">connecting…</span></header>' +
    `<main>${body}</main></body></html>`
  );
}

export const dashboardCss = `
:root { color-scheme: light dark; --fg: #1f2328; --muted: #59636e; --bg: #fff; --line: #d1d9e0; --head: #f6f8fa;
  --good: #1a7f37; --bad: #cf222e; --warn: #9a6700; --info: #0969da; }
@media (prefers-color-scheme: dark) { :root { --fg: #e6edf3; --muted: #9198a1; --bg: #0d1117; --line: #3d444d; --head: #151b23;
  --good: #3fb950; --bad: #f85149; --warn: #d29922; --info: #4493f8; } }
* { box-sizing: border-box; }
body { margin: 0; font: 14px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; color: var(--fg); background: var(--bg); }
header { display: flex; align-items: center; gap: 1rem; padding: .6rem 1.2rem; border-bottom: 1px solid var(--line); background: var(--head); }
header .home { font-weight: 600; color: var(--fg); text-decoration: none; }
main { padding: 1rem 1.2rem; }
h1 { font-size: 1.3rem; margin: .2rem 0 1rem; } h2 { font-size: 1.05rem; margin: 1.4rem 0 .5rem; }
a { color: var(--info); text-decoration: none; } a:hover { text-decoration: underline; }
.live { margin-left: auto; font-size: 12px; color: var(--muted); }
.live.on::before { content: "●"; color: var(--good); margin-right: .3rem; }
.live.off::before { content: "●"; color: var(--bad); margin-right: .3rem; }
.filters { display: flex; gap: 1rem; margin-bottom: .8rem; flex-wrap: wrap; }
.filters select { font: inherit; padding: .15rem .3rem; }
.count { color: var(--muted); margin-left: .4rem; font-weight: normal; font-size: .95rem; }
table { border-collapse: collapse; width: 100%; }
th, td { text-align: left; padding: .35rem .5rem; border-bottom: 1px solid var(--line); vertical-align: top; }
th { background: var(--head); font-weight: 600; white-space: nowrap; }
td.name, td.repository, td.url, td.sha, td.age, td.expires, td.resources, td.pr { white-space: nowrap; }
td.conditions { min-width: 13rem; }
td.name a, td.url a { display: inline-block; max-width: 14rem; overflow: hidden; text-overflow: ellipsis; vertical-align: bottom; }
td.pr .ref { display: block; max-width: 13rem; overflow: hidden; text-overflow: ellipsis; }
td.error { min-width: 15rem; max-width: 30rem; color: var(--bad); overflow-wrap: anywhere; }
.scroll { overflow-x: auto; }
code { font: 12px ui-monospace, SFMono-Regular, Menlo, monospace; }
.ref { color: var(--muted); font-size: 12px; overflow-wrap: anywhere; }
.phase { display: inline-block; padding: 0 .5rem; border-radius: 1rem; font-size: 12px; font-weight: 600; border: 1px solid currentColor; }
.phase-ready { color: var(--good); } .phase-failed { color: var(--bad); } .phase-deploying, .phase-queued, .phase-pending { color: var(--warn); }
.phase-expired, .phase-terminating, .phase-other { color: var(--muted); }
.chip { display: inline-block; padding: 0 .4rem; border-radius: .3rem; font-size: 12px; margin: 0 .15rem .15rem 0; border: 1px solid var(--line); }
.chip.good { color: var(--good); } .chip.bad { color: var(--bad); } .chip.unknown { color: var(--muted); }
.tag { font-size: 12px; color: var(--muted); border: 1px solid var(--line); border-radius: .3rem; padding: 0 .3rem; }
p.error { color: var(--bad); } .empty { color: var(--muted); }
dl.facts { display: grid; grid-template-columns: max-content 1fr; gap: .25rem 1.2rem; margin: 0; }
dl.facts dt { color: var(--muted); } dl.facts dd { margin: 0; overflow-wrap: anywhere; }
`;

export const dashboardScript = `
'use strict';
(() => {
  const format = (at, mode) => {
    const span = mode === 'age' ? Date.now() - at : at - Date.now();
    const s = Math.floor(Math.abs(span) / 1000);
    const text = s < 60 ? s + 's' : s < 3600 ? Math.floor(s / 60) + 'm' : s < 172800 ? Math.floor(s / 3600) + 'h' : Math.floor(s / 86400) + 'd';
    if (mode === 'age') return text;
    return span >= 0 ? 'in ' + text : text + ' ago';
  };
  const tick = () => {
    for (const t of document.querySelectorAll('time[data-age], time[data-until]')) {
      const at = Date.parse(t.dateTime);
      if (!Number.isNaN(at)) t.textContent = format(at, t.hasAttribute('data-age') ? 'age' : 'until');
    }
  };
  setInterval(tick, 5000);
  for (const select of document.querySelectorAll('form.filters select')) select.addEventListener('change', () => select.form.submit());

  const fragment = (html) => {
    const template = document.createElement('template');
    template.innerHTML = html;
    return template.content.firstElementChild;
  };
  const rows = () => document.querySelector('#environments tbody');
  const counted = () => {
    const body = rows();
    if (!body) return;
    const n = body.children.length;
    document.getElementById('environments').hidden = n === 0;
    document.getElementById('none').hidden = n > 0;
    document.getElementById('count').textContent = String(n);
  };
  // Newest first, as the server orders them.
  const place = (row) => {
    const body = rows();
    const old = body.querySelector('tr[data-name="' + CSS.escape(row.dataset.name) + '"]');
    if (old) old.remove();
    const created = row.dataset.created;
    const next = [...body.children].find((r) => r.dataset.created < created || (r.dataset.created === created && r.dataset.name > row.dataset.name));
    body.insertBefore(row, next || null);
  };

  const url = document.body.dataset.stream;
  if (!url) return;
  const live = document.getElementById('live');
  const source = new EventSource(url);
  source.onopen = () => { live.className = 'live on'; live.textContent = 'live'; };
  source.onerror = () => { live.className = 'live off'; live.textContent = 'reconnecting…'; };
  source.addEventListener('upsert', (e) => { const m = JSON.parse(e.data); place(fragment(m.html)); counted(); tick(); });
  source.addEventListener('remove', (e) => {
    const m = JSON.parse(e.data);
    rows()?.querySelector('tr[data-name="' + CSS.escape(m.name) + '"]')?.remove();
    counted();
  });
  source.addEventListener('detail', (e) => { document.getElementById('detail').innerHTML = JSON.parse(e.data).html; tick(); });
  source.addEventListener('reload', () => location.reload());
})();
`;
