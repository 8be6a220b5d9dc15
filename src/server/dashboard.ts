// The read-only dashboard, on a port of its own: every PreviewEnvironment this operator sees, a
// page per environment, filters by repository and phase, kept live over server-sent events fed
// by the informer's cache (no request reaches the API server per page view, except an open
// environment page's bounded read of its Events). Only GET: nothing here can change anything.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { Router, type Request } from 'express';
import { previewEnvironmentApiVersion } from '../../constructs/api-types.js';
import type { KubeClient } from '../kube/client.js';
import type { Logger } from '../kube/logger.js';
import type { Manager } from '../kube/manager.js';
import { createServer } from './create-server.js';
import { isLoopbackAddress, loopbackNamesOnly } from './loopback-names.js';
import { EnvironmentEvents } from './dashboard-events.js';
import { DashboardFeed, matches, type DashboardSource, type ListFilter } from './dashboard-feed.js';
import { environmentDetail, environmentRow, escapeHtml, filterForm, phases, tableHead } from './dashboard-html.js';
import { dashboardCss, dashboardHeaders, dashboardScript, pageHtml, scriptPath, stylePath } from './dashboard-page.js';
import { environmentView, githubWebUrl, type DashboardObject, type EnvironmentView } from './dashboard-view.js';
import { startServer } from './start-server.js';

export interface DashboardOptions {
  environments: DashboardSource;
  /** Reads Events (one bounded list per namespace). */
  client: Pick<KubeClient, 'request'>;
  /** The GitHub REST API URL (`--github-api-url`); pull request links go to its web pages. */
  githubApiUrl: string;
  /** Open streams at most (default 100); more are answered 503. */
  maxStreams?: number;
  /** How often an open environment page refreshes its Events (default 5 s). */
  refreshMs?: number;
  now?: () => number;
}

export class Dashboard {
  private readonly feed: DashboardFeed;
  private readonly events: EnvironmentEvents;
  private readonly webUrl: string;
  private readonly now: () => number;

  constructor(private readonly options: DashboardOptions) {
    this.webUrl = githubWebUrl(options.githubApiUrl);
    this.now = options.now ?? Date.now;
    this.events = new EnvironmentEvents(options.client, { now: this.now });
    this.feed = new DashboardFeed(
      options.environments,
      { view: (obj) => this.view(obj), row: (view) => environmentRow(view, this.now()), detail: (name) => this.detail(name) },
      { refreshMs: options.refreshMs },
    );
  }

  router(): Router {
    const router = Router();
    router.use((_req, res, next) => {
      res.set(dashboardHeaders);
      next();
    });
    router.get('/', (req, res) => void res.type('html').send(this.listPage(listFilter(req))));
    router.get('/environments/:name', (req, res, next) => {
      this.detailPage(String(req.params.name)).then(({ status, html }) => void res.status(status).type('html').send(html), next);
    });
    router.get('/events', (req, res) => this.stream(req, res));
    router.get(scriptPath, (_req, res) => void res.type('text/javascript').send(dashboardScript));
    router.get(stylePath, (_req, res) => void res.type('text/css').send(dashboardCss));
    return router;
  }

  /** Ends every open stream (a server closes only once its connections have). */
  close(): void {
    this.feed.close();
  }

  private view(obj: DashboardObject): EnvironmentView {
    return environmentView(obj, this.webUrl);
  }

  private listPage(filter: ListFilter): string {
    const now = this.now();
    // The list and the position are read in one synchronous step: the stream resumes exactly after this rendering.
    const views = this.options.environments
      .list()
      .map((obj) => this.view(obj))
      .sort(newestFirst);
    const position = this.feed.position;
    const repositories = [...new Set(views.map((v) => v.repository))].sort();
    const shown = views.filter((v) => matches(v, filter));
    const hidden = (yes: boolean) => (yes ? ' hidden' : '');
    const body =
      `<h1>Preview environments <span class="count" id="count">${shown.length}</span></h1>` +
      filterForm(repositories, filter) +
      `<div class="scroll"><table id="environments"${hidden(shown.length === 0)}><thead>${tableHead}</thead>` +
      `<tbody>${shown.map((v) => environmentRow(v, now)).join('')}</tbody></table></div>` +
      `<p id="none" class="empty"${hidden(shown.length > 0)}>No preview environments${filter.repository || filter.phase ? ' match these filters' : ''}.</p>`;
    const query = new URLSearchParams({ ...filter, since: position });
    return pageHtml('Preview environments', body, `/events?${query}`);
  }

  private async detailPage(name: string): Promise<{ status: number; html: string }> {
    const title = `${escapeHtml(name)} · preview environments`;
    const back = '<p><a href="/">← All environments</a></p>';
    if (!this.options.environments.get(name)) {
      return { status: 404, html: pageHtml(title, `${back}<h1>${escapeHtml(name)}</h1><p class="empty">No such preview environment.</p>`) };
    }
    const { html } = await this.detail(name);
    return {
      status: 200,
      html: pageHtml(title, `${back}<section id="detail">${html}</section>`, `/events?environment=${encodeURIComponent(name)}`),
    };
  }

  private async detail(name: string): Promise<{ key: string; html: string }> {
    const obj = this.options.environments.get(name);
    if (!obj) return { key: 'gone', html: `<h1>${escapeHtml(name)}</h1><p class="empty">This preview environment no longer exists.</p>` };
    const view = this.view(obj);
    const events = await withDeadline(this.events.recent(name, view.namespace), 3000, {
      events: [],
      error: 'still reading (the page updates when they arrive)',
    });
    return { key: JSON.stringify([view, events]), html: environmentDetail(view, events, this.now()) };
  }

  private stream(req: Request, res: ServerResponse): void {
    if (this.feed.streams >= (this.options.maxStreams ?? 100)) {
      res.writeHead(503, { 'content-type': 'text/plain', 'retry-after': '10' }).end('too many open dashboards\n');
      return;
    }
    const environment = queryText(req, 'environment');
    if (environment !== undefined) return this.feed.openDetail(req, res, environment);
    const since = header(req, 'last-event-id') ?? queryText(req, 'since');
    this.feed.openList(req, res, listFilter(req), since);
  }
}

export interface RunningDashboard {
  url: string;
  close(): Promise<void>;
}

export interface StartDashboardOptions {
  manager: Manager;
  host: string;
  port: number;
  githubApiUrl: string;
  /** Only the PreviewEnvironments this operator minds (`--environment-selector`). */
  environmentSelector?: string;
  logger?: Logger;
}

/** Serves the dashboard from the manager's PreviewEnvironment informer (shared with the controller's and the resync's). */
export async function startDashboard(options: StartDashboardOptions): Promise<RunningDashboard> {
  const kind = { apiVersion: previewEnvironmentApiVersion, kind: 'PreviewEnvironment' };
  const environments = options.manager.informer(kind, options.environmentSelector ? { labelSelector: options.environmentSelector } : {});
  const dashboard = new Dashboard({ environments, client: options.manager.client, githubApiUrl: options.githubApiUrl });
  const routers = [...(isLoopbackAddress(options.host) ? [loopbackNamesOnly()] : []), dashboard.router()];
  const app = createServer({ routers, ...(options.logger ? { logger: options.logger } : {}) });
  try {
    const server = await startServer(app, { host: options.host, port: options.port });
    return {
      url: server.url,
      close: async () => {
        dashboard.close();
        await server.close();
      },
    };
  } catch (err) {
    dashboard.close();
    throw err;
  }
}

function listFilter(req: Request): ListFilter {
  const repository = queryText(req, 'repository');
  const phase = queryText(req, 'phase');
  return {
    ...(repository ? { repository } : {}),
    ...(phase && (phases as readonly string[]).includes(phase) ? { phase } : {}),
  };
}

function queryText(req: Request, name: string): string | undefined {
  const value = req.query[name];
  return typeof value === 'string' && value.length <= 256 ? value : undefined;
}

function header(req: IncomingMessage, name: string): string | undefined {
  const value = req.headers[name];
  return typeof value === 'string' ? value : undefined;
}

function newestFirst(a: EnvironmentView, b: EnvironmentView): number {
  // Code-unit order, as the page's script compares when it places a row that arrives live.
  const order = (x: string, y: string) => (x < y ? -1 : x > y ? 1 : 0);
  return order(b.createdAt ?? '', a.createdAt ?? '') || order(a.name, b.name);
}

function withDeadline<T>(promise: Promise<T>, ms: number, fallback: T): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<T>((resolve) => (timer = setTimeout(() => resolve(fallback), ms)));
  return Promise.race([promise, late]).finally(() => clearTimeout(timer));
}
