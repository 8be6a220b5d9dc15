// Runs one git command through simple-git: inside the global limit on concurrent git processes,
// with a minimal environment (no ambient GIT_* variables, no user or system configuration), a
// timeout, credentials for that one command only, and failures turned into GitOperationError
// with the credentials redacted.
//
// The token reaches git through the environment of that git process only (`GIT_CONFIG_COUNT`
// and `GIT_CONFIG_KEY_0`/`VALUE_0`: an `http.<origin>.extraheader`), never its argv: anyone on
// the host may read `/proc/<pid>/cmdline`, while `/proc/<pid>/environ` is readable only by the
// same uid (under ptrace rules) and root — and repository code runs under another uid. No
// helper program and no file: nothing to clean up after a crash, nothing on disk to find. The
// git children that need it (git-remote-https) inherit it; nothing else does.
import { mkdirSync } from 'node:fs';
import type { Readable } from 'node:stream';
import { simpleGit, GitError, type SimpleGit } from 'simple-git';
import { GitOperationError, type GitFailureReason } from './git-errors.js';
import { Semaphore } from '../kube/semaphore.js';

export interface GitRunnerOptions {
  /** Upper bound on git processes running at once, across every repository. */
  maxConcurrentProcesses: number;
  /** A git process that writes nothing for this long is killed. */
  timeoutMs: number;
  /** An empty directory used as HOME, so no user configuration (credential helpers, hooks, LFS) applies. */
  homeDir: string;
  /**
   * Operator environment variables handed on to git when set (proxies, CA bundles). Nothing
   * else of the operator's environment reaches git.
   */
  passEnvironment: readonly string[];
}

export interface GitCommandOptions {
  /** The remote the command talks to; the token is scoped to its origin. */
  remote?: URL;
  /** A GitHub installation token (or PAT), sent as HTTP Basic auth for this one command. */
  token?: string;
  /** Extra `-c key=value` settings for this one command. */
  config?: readonly string[];
  /** Stops git once it has written more than this to stdout (a GitOperationError `too-large`), before it is all held. */
  maxOutputBytes?: number;
}

/** How long after git exits its output may still be arriving (callers check what they can). */
const exitGraceMs = 2000;

export const defaultPassEnvironment = [
  'HTTPS_PROXY',
  'https_proxy',
  'HTTP_PROXY',
  'http_proxy',
  'NO_PROXY',
  'no_proxy',
  'ALL_PROXY',
  'all_proxy',
  'GIT_SSL_CAINFO',
  'GIT_SSL_CAPATH',
  'SSL_CERT_FILE',
  'SSL_CERT_DIR',
] as const;

export class GitRunner {
  private readonly processes: Semaphore;
  private readonly env: Record<string, string>;
  private readonly allowEnvironment: string[];
  /** Processes started so far, by subcommand. */
  readonly started = new Map<string, number>();

  constructor(private readonly options: GitRunnerOptions) {
    this.processes = new Semaphore(options.maxConcurrentProcesses);
    mkdirSync(options.homeDir, { recursive: true, mode: 0o700 });
    const passed = Object.fromEntries(options.passEnvironment.flatMap((name) => (process.env[name] ? [[name, process.env[name]!]] : [])));
    this.env = {
      PATH: process.env.PATH ?? '/usr/local/bin:/usr/bin:/bin',
      HOME: options.homeDir,
      XDG_CONFIG_HOME: options.homeDir,
      LC_ALL: 'C',
      GIT_CONFIG_NOSYSTEM: '1',
      GIT_TERMINAL_PROMPT: '0',
      ...passed,
    };
    // simple-git refuses any GIT_* variable set explicitly unless it is named here.
    this.allowEnvironment = Object.keys(this.env).filter((name) => name.toUpperCase().startsWith('GIT_'));
  }

  /** Git processes running right now (for metrics and tests). */
  get running(): number {
    return this.processes.inUse;
  }

  /** Runs `git <args>` in `baseDir` and returns its stdout. */
  run(baseDir: string, args: readonly string[], command: GitCommandOptions = {}): Promise<string> {
    const config = [...(command.config ?? [])];
    const credentials = command.token ? credentialEnvironment(command.token, command.remote) : undefined;
    const secrets = credentials?.secrets ?? [];
    return this.processes.run(async () => {
      const subcommand = args.find((arg) => !arg.startsWith('-')) ?? '';
      this.started.set(subcommand, (this.started.get(subcommand) ?? 0) + 1);
      const git = simpleGit({
        baseDir,
        config,
        timeout: { block: this.options.timeoutMs },
        // The answer is complete when git's output streams close. simple-git 4 also ends a
        // command 50 ms after the process exits, with whatever output it has read by then: on
        // a busy event loop that cut ls-tree and cat-file answers short (a configuration seen
        // as missing or empty). The exit still ends it after a grace period, because a git
        // killed for silence can leave a helper (git-remote-https) holding the streams open.
        completion: { onClose: true, onExit: exitGraceMs },
        allowEnvironment: credentials ? [...this.allowEnvironment, ...Object.keys(credentials.env)] : this.allowEnvironment,
        // Only the GIT_CONFIG_COUNT mechanism itself: simple-git still checks every key set
        // through it against its unsafe list (a core.sshCommand there would still be refused).
        ...(credentials ? { unsafe: { allowUnsafeConfigEnvCount: true } } : {}),
        trimmed: false,
      }).env(credentials ? { ...this.env, ...credentials.env } : this.env);
      const overflow = command.maxOutputBytes === undefined ? undefined : capOutput(git, command.maxOutputBytes);
      const tooLong = () =>
        new GitOperationError('too-large', `git ${args[0] ?? ''} answered more than ${command.maxOutputBytes} bytes and was stopped`);
      let output: string;
      try {
        output = await git.raw([...args]);
      } catch (err) {
        if (overflow?.reached) throw tooLong();
        throw toOperationError(args, err, secrets);
      }
      if (overflow?.reached) throw tooLong();
      return output;
    });
  }
}

/** Closes git's stdout past `max` bytes (git then stops on SIGPIPE); `reached` says whether it did. */
function capOutput(git: SimpleGit, max: number): { reached: boolean } {
  const state = { reached: false };
  git.outputHandler((_command, stdout) => {
    let seen = 0;
    stdout.on('data', (chunk: Buffer) => {
      seen += chunk.length;
      if (seen <= max || state.reached) return;
      state.reached = true;
      (stdout as Readable).destroy();
    });
  });
  return state;
}

/** The environment that gives git `token` for `remote`'s origin only, and the strings to redact. */
function credentialEnvironment(token: string, remote: URL | undefined): { env: Record<string, string>; secrets: string[] } {
  if (!remote) throw new Error('a token needs the remote it is meant for');
  const basic = Buffer.from(`x-access-token:${token}`).toString('base64');
  return {
    env: {
      GIT_CONFIG_COUNT: '1',
      // Scoped to the remote's origin, so a redirect elsewhere does not carry it.
      GIT_CONFIG_KEY_0: `http.${remote.origin}/.extraheader`,
      GIT_CONFIG_VALUE_0: `AUTHORIZATION: basic ${basic}`,
    },
    secrets: [token, basic],
  };
}

function redact(text: string, secrets: readonly string[]): string {
  let out = text;
  for (const secret of secrets) out = out.split(secret).join('***');
  return out;
}

function toOperationError(args: readonly string[], err: unknown, secrets: readonly string[]): GitOperationError {
  const detail = redact(err instanceof Error ? err.message : String(err), secrets).trim();
  const command = `git ${args[0] ?? ''}`;
  if ((err as { plugin?: string }).plugin === 'timeout') {
    return new GitOperationError('timeout', `${command} produced no output for too long and was stopped`, detail);
  }
  if (!(err instanceof GitError)) return new GitOperationError('git-failed', `${command} failed: ${detail}`, detail);
  // git's own failure: the first fatal line says it best (progress lines may come before it).
  const lines = detail.split('\n');
  const fatal = lines.find((line) => line.startsWith('fatal:')) ?? lines[0] ?? '';
  return new GitOperationError(classify(detail), `${command} failed: ${fatal.replace(/^fatal:\s*/, '')}`, detail);
}

// git's wording, as printed by git 2.x for https:// (GitHub) and file:// remotes.
function classify(stderr: string): GitFailureReason {
  if (/not our ref|no such remote ref|couldn't find remote ref|did not send all necessary objects/i.test(stderr)) return 'commit-not-found';
  if (/Authentication failed|could not read Username|could not read Password|returned error: 40[13]|HTTP 40[13]/i.test(stderr))
    return 'authentication';
  if (/Repository not found|does not appear to be a git repository|returned error: 404|HTTP 404/i.test(stderr))
    return 'repository-not-found';
  if (/Could not resolve host|Failed to connect|Connection refused|Connection timed out|SSL|TLS|unable to access/i.test(stderr))
    return 'unreachable';
  return 'git-failed';
}
