// How `npm run dev` takes commands: lines typed in its own terminal (stdin), and `npm run dev --
// <command>` from a second terminal, which hands the line to the running one over a Unix socket
// and prints its answer. One command runs at a time, in the order they came.
import { existsSync, mkdirSync, unlinkSync } from 'node:fs';
import { createConnection, createServer, type Server } from 'node:net';
import path from 'node:path';
import { createInterface } from 'node:readline';
import type { Readable } from 'node:stream';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

/** Where the running `npm run dev` listens: PREVIEW_DEV_SOCKET, else .tmp/dev.sock of the checkout. */
export function devSocketPath(env: Readonly<Record<string, string | undefined>>): string {
  return env.PREVIEW_DEV_SOCKET || path.join(root, '.tmp', 'dev.sock');
}

export interface DevControlOptions {
  socketPath: string;
  /** Commands typed in dev's own terminal; none when stdin is not readable (CI). */
  input?: Readable;
  /** Runs one command line: the answer, or throws with why not. */
  run: (line: string) => Promise<string>;
  say: (line: string) => void;
}

export interface DevControl {
  /** Where other terminals reach it, or undefined when another dev already listens there. */
  socketPath: string | undefined;
  close(): Promise<void>;
}

/** Whether something answers on the socket (a dev that is running) rather than a file left by one that died. */
function answers(socketPath: string): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = createConnection(socketPath, () => {
      socket.end();
      resolve(true);
    });
    socket.on('error', () => resolve(false));
  });
}

async function listen(socketPath: string, handle: (line: string) => Promise<string>): Promise<Server | undefined> {
  mkdirSync(path.dirname(socketPath), { recursive: true });
  if (existsSync(socketPath)) {
    if (await answers(socketPath)) return undefined;
    unlinkSync(socketPath);
  }
  const server = createServer((socket) => {
    const lines = createInterface({ input: socket, terminal: false });
    lines.once('line', (line) => {
      lines.close();
      void handle(line).then(
        (answer) => socket.end(`${answer}\n`),
        (err: Error) => socket.end(`error: ${err.message}\n`),
      );
    });
    socket.on('error', () => {});
  });
  await new Promise<void>((resolve, reject) => server.once('error', reject).listen(socketPath, () => resolve()));
  return server;
}

/** Starts taking commands from stdin and the socket. */
export async function startDevControl(options: DevControlOptions): Promise<DevControl> {
  let queue: Promise<unknown> = Promise.resolve();
  const serialized = (line: string): Promise<string> => {
    const result = queue.then(() => options.run(line));
    queue = result.catch(() => {});
    return result;
  };
  const fromTerminal = (line: string) => {
    if (!line.trim()) return;
    void serialized(line).then(options.say, (err: Error) => options.say(`error: ${err.message}`));
  };
  const fromSocket = async (line: string) => {
    options.say(`(from another terminal) ${line.trim()}`);
    try {
      const answer = await serialized(line);
      options.say(answer);
      return answer;
    } catch (err) {
      options.say(`error: ${(err as Error).message}`);
      throw err;
    }
  };
  // terminal: false leaves the terminal in its own (cooked) mode, so Ctrl-C stays a SIGINT.
  const typed = options.input ? createInterface({ input: options.input, terminal: false }) : undefined;
  typed?.on('line', fromTerminal);
  const server = await listen(options.socketPath, fromSocket);
  if (!server) options.say(`another npm run dev answers on ${options.socketPath}: commands from other terminals go there`);
  return {
    socketPath: server ? options.socketPath : undefined,
    async close() {
      typed?.close();
      if (server) await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** `npm run dev -- <command>`: hands the line to the running dev; prints its answer; the exit code. */
type Io = { stdout: (text: string) => void; stderr: (text: string) => void };

export async function sendDevCommand(socketPath: string, line: string, io: Io): Promise<number> {
  if (!existsSync(socketPath)) {
    io.stderr(`npm run dev: no running npm run dev to send "${line}" to (nothing at ${socketPath}); start one first\n`);
    return 2;
  }
  return await new Promise<number>((resolve) => {
    let answer = '';
    const socket = createConnection(socketPath, () => socket.write(`${line}\n`));
    socket.on('data', (chunk: Buffer) => (answer += chunk.toString('utf8')));
    socket.on('error', (err) => {
      io.stderr(`npm run dev: cannot reach the running npm run dev at ${socketPath}: ${err.message}\n`);
      resolve(2);
    });
    socket.on('end', () => {
      const failed = answer.startsWith('error: ');
      (failed ? io.stderr : io.stdout)(answer);
      resolve(failed ? 1 : 0);
    });
  });
}
