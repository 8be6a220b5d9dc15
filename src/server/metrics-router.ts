// GET /metrics: the Prometheus exposition of one registry.
import { Router } from 'express';
import type { OperatorMetrics } from './metrics.js';

export function metricsRouter(metrics: OperatorMetrics, path = '/metrics'): Router {
  const router = Router();
  router.get(path, async (_req, res) => {
    res.type(metrics.contentType).send(await metrics.metrics());
  });
  return router;
}
