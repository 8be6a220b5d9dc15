// The dashboard's HTML fragments, from its views: a table row per environment, an environment's
// page, the filters. Every piece of text goes through `escapeHtml` and every link through the
// views' http(s) check, here and only here, so a branch name or a status message written by a
// pull request's author is shown as text, never run. The browser receives these fragments
// both in the first page and over the live stream, so what it shows cannot differ between them.
import type { EventView, RecentEvents } from './dashboard-events.js';
import type { ConditionView, EnvironmentView, ResourceView } from './dashboard-view.js';

export const phases = ['Pending', 'Queued', 'Deploying', 'Ready', 'Failed', 'Expired', 'Terminating'] as const;

const entities: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

/** Text safe in element content and in quoted attribute values. */
export function escapeHtml(value: unknown): string {
  return String(value ?? '').replace(/[&<>"']/g, (c) => entities[c]!);
}

/** `/environments/<name>`: an environment's page. */
export function environmentPath(name: string): string {
  return `/environments/${encodeURIComponent(name)}`;
}

/** One row of the environments table. */
export function environmentRow(view: EnvironmentView, now: number): string {
  const cells = [
    `<td class="name"><a href="${escapeHtml(environmentPath(view.name))}" title="${escapeHtml(view.name)}">${escapeHtml(view.name)}</a></td>`,
    `<td class="repository">${link(view.repositoryUrl, view.repository)}</td>`,
    `<td class="pr">${pullRequest(view)}</td>`,
    `<td class="author">${link(view.authorUrl, view.author ?? '')}</td>`,
    `<td>${phaseBadge(view.phase)}</td>`,
    `<td class="url">${view.url ? link(view.url, view.url.replace(/^https?:\/\//, '').replace(/\/$/, '')) : ''}</td>`,
    `<td class="sha">${sha(view.deployedSha)}</td>`,
    `<td class="age">${time(view.createdAt, now, 'age')}</td>`,
    `<td class="expires">${time(view.expiresAt, now, 'until')}</td>`,
    `<td class="conditions">${view.conditions.map(conditionChip).join(' ')}</td>`,
    `<td class="resources">${resourceSummary(view.resources)}</td>`,
    `<td class="error">${view.lastError ? errorText(view.lastError) : ''}</td>`,
  ];
  const data = `data-name="${escapeHtml(view.name)}" data-created="${escapeHtml(view.createdAt ?? '')}"`;
  return `<tr ${data}>${cells.join('')}</tr>`;
}

export const tableHead =
  '<tr><th>Environment</th><th>Repository</th><th>Pull request</th><th>Author</th><th>Phase</th><th>URL</th>' +
  '<th>Deployed</th><th>Age</th><th>Expires</th><th>Conditions</th><th>Resources</th><th>Last error</th></tr>';

/** The filter form: by repository (those present) and by phase. */
export function filterForm(repositories: readonly string[], selected: { repository?: string; phase?: string }): string {
  const options = (values: readonly string[], current: string | undefined, all: string) =>
    [`<option value="">${all}</option>`]
      .concat(values.map((v) => `<option value="${escapeHtml(v)}"${v === current ? ' selected' : ''}>${escapeHtml(v)}</option>`))
      .join('');
  return (
    '<form class="filters" method="get" action="/">' +
    `<label>Repository <select name="repository">${options(repositories, selected.repository, 'all repositories')}</select></label>` +
    `<label>Phase <select name="phase">${options(phases, selected.phase, 'all phases')}</select></label>` +
    '<noscript><button type="submit">Filter</button></noscript></form>'
  );
}

/** The body of an environment's page (replaced as a whole when it changes). */
export function environmentDetail(view: EnvironmentView, events: RecentEvents, now: number): string {
  return [
    `<h1>${escapeHtml(view.name)} ${phaseBadge(view.phase)}</h1>`,
    view.lastError ? `<p class="error">${errorText(view.lastError)}</p>` : '',
    `<dl class="facts">${facts(view, now)}</dl>`,
    '<section class="conditions"><h2>Conditions</h2>',
    table(
      ['Type', 'Status', 'Reason', 'Message', 'Since'],
      view.conditions.map((c) => conditionCells(c, now)),
      'No conditions yet.',
    ),
    '</section><section class="resources"><h2>Resources</h2>',
    table(['Kind', 'Name', 'Ready', 'Message'], view.resources.map(resourceCells), 'No resources reported yet.'),
    '</section><section class="events"><h2>Recent events</h2>',
    events.error ? `<p class="error">Events could not be read: ${escapeHtml(events.error)}</p>` : '',
    table(
      ['Last seen', 'Type', 'Reason', 'Object', 'Message', 'Count'],
      events.events.map((e) => eventCells(e, now)),
      'No recent events.',
    ),
    '</section>',
  ].join('');
}

function facts(view: EnvironmentView, now: number): string {
  const rows: [string, string][] = [
    ['Repository', link(view.repositoryUrl, view.repository)],
    ['Pull request', pullRequest(view)],
    ['Author', `${link(view.authorUrl, view.author ?? '')}${view.fork ? ' <span class="tag">fork</span>' : ''}`],
    ['URL', view.url ? link(view.url, view.url) : ''],
    ['Namespace', escapeHtml(view.namespace ?? '')],
    ['Head commit', sha(view.headSha)],
    ['Deployed commit', sha(view.deployedSha)],
    ['Created', time(view.createdAt, now, 'age')],
    ['Expires', time(view.expiresAt, now, 'until')],
    ['Last reconciled', time(view.lastReconciled, now, 'age')],
  ];
  return rows.map(([term, value]) => `<dt>${term}</dt><dd>${value || '—'}</dd>`).join('');
}

function pullRequest(view: EnvironmentView): string {
  const number = view.pullRequest === undefined ? '' : `#${view.pullRequest}`;
  const ref = view.headRef ? ` <span class="ref" title="${escapeHtml(view.headRef)}">${escapeHtml(view.headRef)}</span>` : '';
  return `${link(view.pullRequestUrl, number)}${ref}`;
}

/** A link when `href` is given (the views keep only http(s) URLs), else the text. */
function link(href: string | undefined, text: string): string {
  if (!href) return escapeHtml(text);
  return `<a href="${escapeHtml(href)}" rel="noopener noreferrer">${escapeHtml(text)}</a>`;
}

function phaseBadge(phase: string): string {
  const known = (phases as readonly string[]).includes(phase) ? phase.toLowerCase() : 'other';
  return `<span class="phase phase-${known}">${escapeHtml(phase)}</span>`;
}

function conditionChip(c: ConditionView): string {
  const state = conditionState(c);
  return `<span class="chip ${state}" title="${escapeHtml(`${c.reason}: ${c.message}`)}">${escapeHtml(c.type)}</span>`;
}

/** good, bad or unknown: `Stalled` and `Reconciling` say True when something is wrong or under way. */
function conditionState(c: ConditionView): string {
  if (c.status === 'Unknown') return 'unknown';
  const abnormal = c.type === 'Stalled' || c.type === 'Reconciling';
  return (c.status === 'True') !== abnormal ? 'good' : 'bad';
}

function resourceSummary(resources: readonly ResourceView[]): string {
  if (resources.length === 0) return '';
  const ready = resources.filter((r) => r.ready).length;
  const waiting = resources.filter((r) => !r.ready).map((r) => `${r.kind} ${r.name}: ${r.message ?? 'not ready'}`);
  const state = ready === resources.length ? 'good' : 'bad';
  return `<span class="chip ${state}" title="${escapeHtml(waiting.join('\n'))}">${ready}/${resources.length} ready</span>`;
}

function errorText(error: { reason: string; message: string }): string {
  return `<strong>${escapeHtml(error.reason)}</strong> ${escapeHtml(error.message)}`;
}

function sha(value: string | undefined): string {
  return value ? `<code title="${escapeHtml(value)}">${escapeHtml(value.slice(0, 12))}</code>` : '';
}

/** A `<time>` the page's script keeps current: `age` (how long ago) or `until` (how long until). */
function time(iso: string | undefined, now: number, mode: 'age' | 'until'): string {
  const at = iso ? Date.parse(iso) : NaN;
  if (Number.isNaN(at)) return '';
  return `<time datetime="${escapeHtml(iso)}" data-${mode} title="${escapeHtml(iso)}">${relativeTime(at, now, mode)}</time>`;
}

/** `5m`, `3h`, `2d` ago for `age`; `in 71h` or `5m ago` for `until` (the page's script formats alike). */
export function relativeTime(at: number, now: number, mode: 'age' | 'until'): string {
  const span = mode === 'age' ? now - at : at - now;
  const s = Math.floor(Math.abs(span) / 1000);
  const text =
    s < 60 ? `${s}s` : s < 3600 ? `${Math.floor(s / 60)}m` : s < 172_800 ? `${Math.floor(s / 3600)}h` : `${Math.floor(s / 86_400)}d`;
  if (mode === 'age') return text;
  return span >= 0 ? `in ${text}` : `${text} ago`;
}

function conditionCells(c: ConditionView, now: number): string[] {
  return [
    escapeHtml(c.type),
    `<span class="chip ${conditionState(c)}">${escapeHtml(c.status)}</span>`,
    escapeHtml(c.reason),
    escapeHtml(c.message),
    time(c.since, now, 'age'),
  ];
}

function resourceCells(r: ResourceView): string[] {
  return [
    escapeHtml(r.kind),
    escapeHtml(r.name),
    `<span class="chip ${r.ready ? 'good' : 'bad'}">${r.ready ? 'ready' : 'not ready'}</span>`,
    escapeHtml(r.message ?? ''),
  ];
}

function eventCells(e: EventView, now: number): string[] {
  const type = `<span class="chip ${e.type === 'Warning' ? 'bad' : 'good'}">${escapeHtml(e.type)}</span>`;
  return [time(e.lastSeen, now, 'age'), type, escapeHtml(e.reason), escapeHtml(e.object), escapeHtml(e.message), escapeHtml(e.count)];
}

/** Cells are HTML already escaped by their makers. */
function table(head: readonly string[], rows: readonly string[][], empty: string): string {
  if (rows.length === 0) return `<p class="empty">${empty}</p>`;
  const th = head.map((h) => `<th>${h}</th>`).join('');
  const body = rows.map((cells) => `<tr>${cells.map((c) => `<td>${c}</td>`).join('')}</tr>`).join('');
  return `<table class="detail"><thead><tr>${th}</tr></thead><tbody>${body}</tbody></table>`;
}
