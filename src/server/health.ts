// GET /readyz: ready when every named check passes (caches synced, webhook server listening,
// not shutting down). A failing check names itself in the answer, so `kubectl describe pod`
// shows why a replica gets no traffic. Liveness (/healthz) stays in create-server: a replica
// that is alive but not ready must not be restarted.
import { Router } from 'express';

/** True when the part it checks is ready. A throwing check counts as not ready. */
export type ReadinessCheck = () => boolean | Promise<boolean>;

export class Readiness {
  private readonly checks = new Map<string, ReadinessCheck>();
  private draining = false;

  /** Adds (or replaces) a named check. */
  add(name: string, check: ReadinessCheck): this {
    this.checks.set(name, check);
    return this;
  }

  /** From now on not ready: the Service stops sending webhooks here while in-flight work drains. */
  drain(): void {
    this.draining = true;
  }

  /** Each check's result, in the order they were added. */
  async evaluate(): Promise<{ ready: boolean; checks: { name: string; ok: boolean }[] }> {
    const checks = [{ name: 'not-shutting-down', ok: !this.draining }];
    for (const [name, check] of this.checks) {
      let ok: boolean;
      try {
        ok = await check();
      } catch {
        ok = false;
      }
      checks.push({ name, ok });
    }
    return { ready: checks.every((c) => c.ok), checks };
  }

  router(path = '/readyz'): Router {
    const router = Router();
    router.get(path, async (req, res) => {
      const { ready, checks } = await this.evaluate();
      // Like the API server's /readyz: one line per check with ?verbose, else only failures.
      const shown = req.query.verbose !== undefined ? checks : checks.filter((c) => !c.ok);
      const lines = shown.map((c) => `[${c.ok ? '+' : '-'}]${c.name} ${c.ok ? 'ok' : 'failed'}`);
      lines.push(ready ? 'ok' : 'not ready');
      res
        .status(ready ? 200 : 503)
        .type('text/plain')
        .send(`${lines.join('\n')}\n`);
    });
    return router;
  }
}
