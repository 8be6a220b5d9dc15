// The operator's HTTP surface: the GitHub webhook and health, with room for more routers
// (readiness, metrics, a dashboard) that other parts mount through `routers`.
import type { IncomingMessage, RequestListener, ServerResponse } from 'node:http';
import express, { type ErrorRequestHandler, type Router } from 'express';
import { silentLogger, type Logger } from '../kube/logger.js';
import type { WebhookReceiver } from '../intake/webhook-receiver.js';

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

/** The request listener to serve (`startServer`, or `http.createServer`). */
export function createServer(options: ServerOptions = {}): RequestListener {
  const logger = options.logger ?? silentLogger;
  const app = express();
  app.disable('x-powered-by');
  const fail = (err: unknown, req: IncomingMessage, res: ServerResponse) => {
    logger.error({ err, method: req.method, path: req.url }, 'request failed');
    if (res.headersSent) return;
    sendJson(res, 500, { error: 'internal error' });
  };

  const webhook = options.webhook;
  const path = options.webhookPath ?? webhookPath;
  // The receiver reads the raw body itself (its signature covers the exact bytes): no body
  // parser may run before it.
  const answerWebhook = webhook
    ? (req: IncomingMessage, res: ServerResponse) => {
        webhook
          .handle(req)
          .then((answer) => sendJson(res, answer.status, answer.body, answer.headers))
          .catch((err) => fail(err, req, res));
      }
    : undefined;
  if (answerWebhook) {
    app.post(path, (req, res) => answerWebhook(req, res));
    app.all(path, (_req, res) => sendJson(res, 405, { error: 'only POST is accepted here' }, { allow: 'POST' }));
  }

  app.get('/healthz', async (_req, res) => {
    const alive = options.health ? await options.health() : true;
    res
      .status(alive ? 200 : 503)
      .type('text/plain')
      .send(alive ? 'ok' : 'unhealthy');
  });

  for (const router of options.routers ?? []) app.use(router);

  app.use((_req, res) => sendJson(res, 404, { error: 'not found' }));
  const onError: ErrorRequestHandler = (err, req, res, _next) => fail(err, req, res);
  app.use(onError);
  if (!answerWebhook) return app;
  // A delivery to the exact path skips Express: its routing and `res.json` (which hashes every
  // body for an ETag) were a third of an answer's CPU, and during a flood of deliveries the
  // answer time is that CPU (docs/benchmarks.md). Other spellings of the path still reach the
  // same answer through Express's route.
  return (req, res) => {
    if (req.method === 'POST' && (req.url === path || req.url?.startsWith(`${path}?`))) answerWebhook(req, res);
    else app(req, res);
  };
}

function sendJson(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { ...headers, 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}
