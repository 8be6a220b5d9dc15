// The operator's HTTP surface: the GitHub webhook and health, with room for more routers
// (readiness, metrics, a dashboard) that other parts mount through `routers`.
import express, { type ErrorRequestHandler, type Express, type Router } from 'express';
import { silentLogger, type Logger } from '../kube/logger.js';
import type { WebhookReceiver } from '../github/webhook-receiver.js';

export const webhookPath = '/api/github/webhooks';

export interface ServerOptions {
  /** Answers POST /api/github/webhooks. Absent: the route answers 404 like any unknown path. */
  webhook?: WebhookReceiver;
  /** Where the webhook is served (default `webhookPath`). */
  webhookPath?: string;
  /** Liveness behind GET /healthz (default: alive while the process serves requests). */
  health?: () => boolean | Promise<boolean>;
  /** More routes, mounted in order after the built-in ones (e.g. /readyz, /metrics). */
  routers?: readonly Router[];
  logger?: Logger;
}

export function createServer(options: ServerOptions = {}): Express {
  const logger = options.logger ?? silentLogger;
  const app = express();
  app.disable('x-powered-by');

  const webhook = options.webhook;
  const path = options.webhookPath ?? webhookPath;
  if (webhook) {
    // The receiver reads the raw body itself (its signature covers the exact bytes): no
    // body parser may run before this route.
    app.post(path, async (req, res) => {
      const answer = await webhook.handle(req);
      res.status(answer.status).set(answer.headers).json(answer.body);
    });
    app.all(path, (_req, res) => {
      res.status(405).set('allow', 'POST').json({ error: 'only POST is accepted here' });
    });
  }

  app.get('/healthz', async (_req, res) => {
    const alive = options.health ? await options.health() : true;
    res.status(alive ? 200 : 503).type('text/plain').send(alive ? 'ok' : 'unhealthy');
  });

  for (const router of options.routers ?? []) app.use(router);

  app.use((_req, res) => {
    res.status(404).json({ error: 'not found' });
  });
  const onError: ErrorRequestHandler = (err, req, res, _next) => {
    logger.error({ err, method: req.method, path: req.path }, 'request failed');
    if (res.headersSent) return;
    res.status(500).json({ error: 'internal error' });
  };
  app.use(onError);
  return app;
}
