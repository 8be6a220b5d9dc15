// `run` as a process: start the operator, turn SIGTERM/SIGINT into a graceful stop bounded
// by the drain deadline, and return the exit code. Losing the lease does not end the process:
// it stops reconciling and campaigns again, and its webhook server keeps answering.
import type { OperatorConfig } from './config.js';
import type { OperatorLogger } from './logger.js';
import { startOperator } from './cli-run.js';

/** Margin past the drain deadline for closing servers and releasing the Lease. */
const releaseMarginMs = 5_000;

export async function runUntilStopped(config: OperatorConfig, logger: OperatorLogger): Promise<number> {
  let operator;
  try {
    operator = await startOperator(config, { logger });
  } catch (err) {
    logger.error({ err }, 'the operator could not start');
    return 1;
  }
  let signalled = false;
  const onSignal = (signal: NodeJS.Signals) => {
    if (signalled) {
      logger.warn({ signal }, 'second signal: exiting without waiting for in-flight work');
      process.exit(1);
    }
    signalled = true;
    logger.info(
      { signal, drainTimeoutMs: config.drainTimeoutMs },
      'stopping: no new webhooks, draining in-flight work, releasing the lease',
    );
    setTimeout(() => {
      logger.error({ drainTimeoutMs: config.drainTimeoutMs }, 'in-flight work did not finish before the deadline; exiting');
      process.exit(1);
    }, config.drainTimeoutMs + releaseMarginMs).unref();
    void operator.stop();
  };
  process.on('SIGTERM', onSignal);
  process.on('SIGINT', onSignal);
  try {
    return await operator.done;
  } finally {
    process.off('SIGTERM', onSignal);
    process.off('SIGINT', onSignal);
  }
}
