// Runs inside the sandboxed process: builds the chart from the operator's input, calls the
// repository's default export with it, synthesises, and answers with exactly one JSON document
// on stdout. Failures of the repository's code are reported the same way, never by crashing.
import { sendResult, sandboxInput } from './sandbox-hardening.js';

/** What a chart factory gives the harness: the chart and context the user's function receives, and how to synthesise. */
export interface SandboxChart {
  chart: unknown;
  context: unknown;
  /** The manifests of everything in the construct tree after the user's function ran. */
  synth(): unknown[];
}

/** Builds the chart from the (JSON) input inside the sandbox. */
export type SandboxChartFactory = (input: unknown) => SandboxChart;

/** The one document the sandboxed process writes on stdout. */
export type SandboxResponse = { ok: true; manifests: unknown[] } | { ok: false; error: SandboxChildError };

export interface SandboxChildError {
  kind: 'permission' | 'exception' | 'bad-output';
  message: string;
  /** For `permission`: what the permission model (or the hardening) denied. */
  permission?: string;
  resource?: string;
  /** `path:line:column` inside the checkout where the error was raised, when known. */
  location?: string;
}

function locate(stack: string | undefined, checkoutDir: string): string | undefined {
  if (!stack) return undefined;
  for (const line of stack.split('\n')) {
    const match = /\(?((?:file:\/\/)?\/[^():]+):(\d+):(\d+)\)?\s*$/.exec(line);
    if (!match) continue;
    const file = match[1]!.replace(/^file:\/\//, '');
    if (file.startsWith(`${checkoutDir}/`)) return `${file.slice(checkoutDir.length + 1)}:${match[2]}:${match[3]}`;
  }
  return undefined;
}

function describe(err: unknown, checkoutDir: string): SandboxChildError {
  if (err instanceof Error) {
    const { code, permission, resource } = err as Error & { code?: unknown; permission?: unknown; resource?: unknown };
    const location = locate(err.stack, checkoutDir);
    if (code === 'ERR_ACCESS_DENIED') {
      return { kind: 'permission', message: err.message, permission: String(permission ?? ''), resource: String(resource ?? ''), location };
    }
    return { kind: 'exception', message: `${err.name}: ${err.message}`, location };
  }
  return { kind: 'exception', message: `threw a non-Error value: ${String(err).slice(0, 200)}` };
}

let finished = false;

function finish(response: SandboxResponse): void {
  if (finished) return;
  finished = true;
  let document: string;
  try {
    document = JSON.stringify(response);
  } catch (err) {
    document = JSON.stringify({
      ok: false,
      error: { kind: 'bad-output', message: `the rendered objects are not serialisable as JSON: ${(err as Error).message}` },
    } satisfies SandboxResponse);
  }
  sendResult(document);
}

export async function runHarness(
  createChart: SandboxChartFactory,
  loadUserModule: () => Promise<unknown>,
  checkoutDir: string,
  entry: string,
): Promise<void> {
  const fail = (err: unknown) => finish({ ok: false, error: describe(err, checkoutDir) });
  process.on('uncaughtException', fail);
  process.on('unhandledRejection', fail);
  try {
    const userModule = (await loadUserModule()) as { default?: unknown };
    const render = userModule.default;
    if (typeof render !== 'function') {
      finish({ ok: false, error: { kind: 'bad-output', message: `${entry} must export a default function (chart, context) => void` } });
      return;
    }
    const { chart, context, synth } = createChart(sandboxInput);
    await render(chart, context);
    const manifests = synth();
    finish({ ok: true, manifests });
  } catch (err) {
    fail(err);
  }
}
