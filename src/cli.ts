// The command line: `run`, `synth`, `renderer`, `help`, `version`. Exit codes: 0 done, 1 failed
// while running, 2 bad usage or configuration (nothing was started).
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { ConfigError, loadConfig, type ConfigIssue, type LoadConfigOptions, type OperatorConfig } from './config.js';
import { asksForHelp, helpText, usage } from './cli-help.js';
import { settings } from './config-settings.js';
import { createLogger } from './logger.js';
import { plainText } from './plain-text.js';

export interface CliIo {
  stdout: (text: string) => void;
  stderr: (text: string) => void;
}

const processIo: CliIo = {
  stdout: (text) => void process.stdout.write(text),
  stderr: (text) => void process.stderr.write(text),
};

/** Takes a command's own flags (e.g. synth's --repo) out of the arguments; the rest are settings. */
export function takeFlags(
  args: readonly string[],
  names: readonly string[],
): { values: Map<string, string>; rest: string[]; issues: ConfigIssue[] } {
  const options = Object.fromEntries(names.map((name) => [name, { type: 'string' as const }]));
  const { tokens } = parseArgs({ args: [...args], options, strict: false, allowPositionals: true, tokens: true });
  const values = new Map<string, string>();
  const issues: ConfigIssue[] = [];
  /** Arguments that are own flags or their values. */
  const taken = new Set<number>();
  for (const token of tokens) {
    if (token.kind !== 'option' || !token.rawName.startsWith('--') || !names.includes(token.name)) continue;
    taken.add(token.index);
    // parseArgs takes whatever follows as the value: another flag is not one.
    if (token.value === undefined || (token.inlineValue === false && token.value.startsWith('--'))) {
      issues.push({ setting: `--${token.name}`, message: 'needs a value' });
      continue;
    }
    if (token.inlineValue === false) taken.add(token.index + 1);
    values.set(token.name, token.value);
  }
  return { values, rest: args.filter((_, i) => !taken.has(i)), issues };
}

type Env = Readonly<Record<string, string | undefined>>;

/** What a command gets: its own arguments (after the command's name), the environment, and where to write. */
interface CommandContext {
  args: readonly string[];
  env: Env;
  io: CliIo;
}

type Command = (context: CommandContext) => number | Promise<number>;

function reportIssues(io: CliIo, issues: readonly ConfigIssue[]): number {
  const problems = `${issues.length} problem${issues.length === 1 ? '' : 's'}`;
  io.stderr(`preview-operator: invalid configuration (${problems}); nothing was started:\n`);
  for (const issue of issues) io.stderr(`  ${issue.setting}: ${issue.message}\n`);
  return 2;
}

/** Loads the configuration; its problems join `issues` (so a command reports them with its own) instead of being thrown. */
function loadConfigInto(issues: ConfigIssue[], options: LoadConfigOptions): OperatorConfig | undefined {
  try {
    return loadConfig(options);
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    issues.push(...err.issues);
    return undefined;
  }
}

function version(): string {
  const packageJson = new URL(import.meta.url.includes('/dist/') ? '../../package.json' : '../package.json', import.meta.url);
  const pkg = JSON.parse(readFileSync(packageJson, 'utf8')) as { version: string };
  return pkg.version;
}

async function runCommand({ args, env, io }: CommandContext): Promise<number> {
  const issues: ConfigIssue[] = [];
  const config = loadConfigInto(issues, { args, env, purpose: 'run' });
  if (!config) return reportIssues(io, issues);
  const { runUntilStopped } = await import('./cli-run-process.js');
  return await runUntilStopped(config, createLogger({ level: config.logLevel }));
}

async function synthCommand({ args, env, io }: CommandContext): Promise<number> {
  const own = takeFlags(args, ['repo', 'pr', 'sha', 'repository']);
  const issues = [...own.issues];
  const repo = own.values.get('repo');
  if (!repo) issues.push({ setting: '--repo', message: 'required: the path of a local git repository' });
  const pr = Number(own.values.get('pr') ?? '1');
  if (!Number.isSafeInteger(pr) || pr < 1) {
    issues.push({ setting: '--pr', message: `must be a pull request number, not "${own.values.get('pr')}"` });
  }
  const config = loadConfigInto(issues, { args: own.rest, env, purpose: 'synth' });
  if (issues.length > 0 || !config) return reportIssues(io, issues);
  const { synthesize } = await import('./cli-synth.js');
  const request = { repo: repo!, pullRequest: pr, sha: own.values.get('sha'), repository: own.values.get('repository') };
  const output = await synthesize(request, config);
  // The messages quote the repository (its YAML, what its main.ts threw): no terminal controls.
  for (const message of output.messages) io.stderr(`${plainText(message)}\n`);
  io.stdout(output.yaml);
  return output.ok ? 0 : 1;
}

async function rendererCommand({ args, env, io }: CommandContext): Promise<number> {
  const own = takeFlags(args, ['checkout-root', 'client-gid']);
  const issues = [...own.issues];
  const checkoutRoot = own.values.get('checkout-root');
  if (!checkoutRoot) issues.push({ setting: '--checkout-root', message: 'required: the checkout volume shared with the operator' });
  const clientGid = Number(own.values.get('client-gid'));
  if (!Number.isSafeInteger(clientGid) || clientGid < 0) {
    issues.push({ setting: '--client-gid', message: "required: the operator's gid, the only group that may connect" });
  }
  const config = loadConfigInto(issues, { args: own.rest, env, purpose: 'renderer' });
  if (config && !config.sandbox.rendererSocket) issues.push({ setting: '--sandbox-renderer-socket', message: 'required: where to listen' });
  if (issues.length > 0 || !config) return reportIssues(io, issues);
  const { runRenderer } = await import('./cli-renderer.js');
  return await runRenderer(config, { checkoutRoot: checkoutRoot!, clientGid }, io);
}

function devCommand({ io }: CommandContext): number {
  // The local demo is a test harness (test/dev/): it is not part of the operator.
  io.stderr('preview-operator: `dev` runs from a source checkout: npm ci && npm run dev\n');
  return 2;
}

function versionCommand({ io }: CommandContext): number {
  io.stdout(`${version()}\n`);
  return 0;
}

function helpCommand({ args, io }: CommandContext): number {
  const text = helpText(args[0]);
  if (text === undefined) {
    io.stderr(`preview-operator help: no command or topic "${args[0]}"\n\n${usage}`);
    return 2;
  }
  io.stdout(text);
  return 0;
}

const commands = new Map<string, Command>([
  ['run', runCommand],
  ['synth', synthCommand],
  ['renderer', rendererCommand],
  ['dev', devCommand],
  ['version', versionCommand],
  ['--version', versionCommand],
  ['help', helpCommand],
  ['--help', helpCommand],
  ['-h', helpCommand],
]);

export async function runCli(argv: readonly string[], env: Env, io: CliIo = processIo): Promise<number> {
  const [command, ...args] = argv;
  try {
    if (command === undefined) {
      io.stderr(usage);
      return 2;
    }
    const handler = commands.get(command);
    if (!handler) {
      io.stderr(`preview-operator: unknown command "${command}"\n\n${usage}`);
      return 2;
    }
    // `<command> --help` describes the command and starts nothing, whatever else is given.
    const topic = command.startsWith('-') ? 'help' : command;
    if (asksForHelp(args) && helpText(topic) !== undefined) return helpCommand({ args: [topic], env, io });
    return await handler({ args, env, io });
  } catch (err) {
    io.stderr(`preview-operator ${command}: ${(err as Error).message}\n`);
    return 1;
  }
}

export { settings, usage };
