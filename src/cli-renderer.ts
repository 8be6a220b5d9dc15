// `preview-operator renderer`: the sandbox served on a Unix socket (src/synth/sandbox-remote.ts)
// until SIGTERM. It refuses to start where the kernel isolation is not available, so a pod that
// lacks the capabilities fails visibly instead of running repository code unconfined.
import type { CliIo } from './cli.js';
import type { OperatorConfig } from './config.js';
import { Sandbox } from './synth/sandbox.js';
import { isolationSupport } from './synth/sandbox-isolation.js';
import { serveSandbox } from './synth/sandbox-remote.js';

export async function runRenderer(
  config: OperatorConfig,
  options: { checkoutRoot: string; clientGid: number },
  io: CliIo,
): Promise<number> {
  const support = isolationSupport();
  if (!support.ok) {
    io.stderr(`preview-operator renderer: cannot isolate repository code here: ${support.reason}\n`);
    return 1;
  }
  const { timeoutMs, maxHeapMb, maxRssMb, rendererSocket } = config.sandbox;
  const server = await serveSandbox(new Sandbox<unknown>({ timeoutMs, maxHeapMb, maxRssMb }), {
    socketPath: rendererSocket!,
    checkoutRoot: options.checkoutRoot,
    clientGid: options.clientGid,
  });
  io.stderr(`preview-operator renderer: serving the sandbox on ${rendererSocket}\n`);
  await new Promise<void>((resolve) => {
    process.once('SIGTERM', resolve);
    process.once('SIGINT', resolve);
  });
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return 0;
}
