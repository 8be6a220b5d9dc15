// The sandbox as a service on a Unix socket: the production form where the operator runs as a
// non-root pod. A renderer container in the same pod (`preview-operator renderer`) holds the
// capabilities the kernel isolation needs and nothing else — no ServiceAccount token, no GitHub
// credentials, no webhook secret — and runs each request with the same Sandbox (its own uid, an
// empty network namespace). The operator, which holds the credentials and none of those
// capabilities, sends what to run: the checkout's path on the volume both containers mount
// (read-only in the renderer), the entry and the input.
import { chmod, chown, mkdir, realpath, rm } from 'node:fs/promises';
import { createServer, request as httpRequest, type Server } from 'node:http';
import path from 'node:path';
import { SandboxError, type SandboxFailureReason } from './sandbox-error.js';
import { Sandbox, type SandboxRequest, type SandboxResult, type SandboxRunner } from './sandbox.js';

/** What the renderer answers: the result, or the SandboxError's parts. */
type RemoteAnswer<T> = { ok: true; result: T } | { ok: false; error: { reason: SandboxFailureReason; message: string; logs: string } };

const maxRequestBytes = 4 * 1024 * 1024;

async function readBody(stream: NodeJS.ReadableStream, limit: number): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of stream) {
    size += (chunk as Buffer).length;
    if (size > limit) throw new Error(`more than ${limit} bytes`);
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks).toString('utf8');
}

export interface RendererServerOptions {
  /** Path of the Unix socket; its directory is created 0750 and given to `clientGid`. */
  socketPath: string;
  /** Only checkouts under this directory are run (the shared checkout volume). */
  checkoutRoot: string;
  /** The operator's gid: the only group that may connect. */
  clientGid: number;
}

function inside(file: string, dir: string): boolean {
  const relative = path.relative(dir, file);
  return relative !== '' && !relative.startsWith('..') && !path.isAbsolute(relative);
}

/** Serves `sandbox` on the socket until the returned server is closed. */
export async function serveSandbox(sandbox: SandboxRunner<unknown>, options: RendererServerOptions): Promise<Server> {
  const root = await realpath(options.checkoutRoot);
  const handle = async (body: string): Promise<RemoteAnswer<SandboxResult>> => {
    const request = JSON.parse(body) as SandboxRequest<unknown>;
    const checkoutDir = await realpath(String(request.checkoutDir));
    if (!inside(checkoutDir, root)) throw new SandboxError('permission', `${checkoutDir} is not a checkout the renderer serves`);
    return { ok: true, result: await sandbox.run({ checkoutDir, entry: request.entry, input: request.input }) };
  };
  const server = createServer((req, res) => {
    if (req.method !== 'POST' || req.url !== '/render') {
      res.writeHead(404).end();
      return;
    }
    readBody(req, maxRequestBytes)
      .then(handle)
      .catch((err: unknown): RemoteAnswer<SandboxResult> => {
        const failure =
          err instanceof SandboxError
            ? err
            : new SandboxError('bad-output', `the renderer could not run the request: ${(err as Error).message}`);
        return { ok: false, error: { reason: failure.reason, message: failure.message, logs: failure.logs } };
      })
      .then((answer) => res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(answer)));
  });
  const dir = path.dirname(options.socketPath);
  await mkdir(dir, { recursive: true });
  await chown(dir, process.getuid?.() ?? 0, options.clientGid);
  await chmod(dir, 0o750);
  await rm(options.socketPath, { force: true });
  await new Promise<void>((resolve, reject) => server.once('error', reject).listen(options.socketPath, resolve));
  await chown(options.socketPath, process.getuid?.() ?? 0, options.clientGid);
  await chmod(options.socketPath, 0o660);
  return server;
}

/** A SandboxRunner that asks the renderer on `socketPath`. */
export class RemoteSandbox<Input> implements SandboxRunner<Input> {
  constructor(
    private readonly socketPath: string,
    private readonly timeoutMs: number,
  ) {}

  async run(request: SandboxRequest<Input>): Promise<SandboxResult> {
    const body = JSON.stringify({ checkoutDir: await realpath(request.checkoutDir), entry: request.entry, input: request.input });
    const text = await new Promise<string>((resolve, reject) => {
      const req = httpRequest({ socketPath: this.socketPath, path: '/render', method: 'POST', timeout: this.timeoutMs }, (res) => {
        readBody(res, 64 * 1024 * 1024).then(resolve, reject);
      });
      req.on('timeout', () => req.destroy(new Error(`no answer within ${this.timeoutMs} ms`)));
      req.on('error', (err) =>
        reject(new SandboxError('isolation', `the sandbox renderer at ${this.socketPath} is not reachable: ${err.message}`)),
      );
      req.end(body);
    });
    const answer = JSON.parse(text) as RemoteAnswer<SandboxResult>;
    if (!answer.ok) throw new SandboxError(answer.error.reason, answer.error.message, answer.error.logs);
    return answer.result;
  }
}

export interface SandboxSettings {
  timeoutMs: number;
  maxHeapMb: number;
  maxRssMb: number;
  /** Set: the renderer at this socket runs the code; unset: this process does. */
  rendererSocket?: string;
}

/** The runner the settings ask for: the renderer container, or this process's own Sandbox. */
export function sandboxRunnerFor<Input>(settings: SandboxSettings): SandboxRunner<Input> {
  const limits = { timeoutMs: settings.timeoutMs, maxHeapMb: settings.maxHeapMb, maxRssMb: settings.maxRssMb };
  // The renderer bundles and copies before it runs: give it more than the run's own limit.
  if (settings.rendererSocket) return new RemoteSandbox<Input>(settings.rendererSocket, settings.timeoutMs + 30_000);
  return new Sandbox<Input>(limits);
}
