// The settings given on the command line, read by node:util's parseArgs with options made from
// the settings table: a setting added to the table is a flag at once. Nothing here throws: an
// unknown flag, a stray argument, a flag without its value or given twice is an issue, so the
// loader reports every problem in one go.
import { parseArgs } from 'node:util';
import type { ConfigIssue } from './config.js';
import { settingByFlag, settings } from './config-settings.js';

type Token = NonNullable<ReturnType<typeof parseArgs>['tokens']>[number];
type OptionToken = Extract<Token, { kind: 'option' }>;

/** A boolean setting takes no value unless written `--flag=false` or `--flag false`; every other setting takes one. */
function flagOptions() {
  return Object.fromEntries(settings.map((s) => [s.flag, { type: s.kind === 'boolean' ? ('boolean' as const) : ('string' as const) }]));
}

/** The value of every setting given as a flag, by flag name (`--webhook-port=8080`, `--webhook-port 8080`). */
export function readFlags(args: readonly string[], issues: ConfigIssue[]): Map<string, string> {
  const values = new Map<string, string>();
  readFlagsInto(args, values, issues);
  return values;
}

function readFlagsInto(args: readonly string[], values: Map<string, string>, issues: ConfigIssue[]): void {
  const { tokens } = parseArgs({ args: [...args], options: flagOptions(), strict: false, allowPositionals: true, tokens: true });
  const unexpected = (arg: string) => issues.push({ setting: arg, message: 'unexpected argument (settings are written --name=value)' });
  /** Arguments read as the value of the flag before them. */
  const taken = new Set<number>();
  for (const [i, token] of tokens.entries()) {
    if (token.kind !== 'option') {
      if (!taken.has(token.index)) unexpected(args[token.index]!);
      continue;
    }
    // Short options (`-h`, `-abc`, one token per letter): the argument is reported once.
    if (!token.rawName.startsWith('--')) {
      if (tokens[i - 1]?.index !== token.index) unexpected(args[token.index]!);
      continue;
    }
    const next = tokens[i + 1];
    const following = next?.kind === 'positional' && next.index === token.index + 1 ? next.value : undefined;
    const read = readOption(token, following, issues);
    if (read.tookFollowing) taken.add(token.index + 1);
    if (read.value !== undefined) {
      if (values.has(token.name)) issues.push({ setting: `--${token.name}`, message: 'given more than once' });
      values.set(token.name, read.value);
    }
    // parseArgs gave a flag as the value of the one before it (`--domain --port=1`): it is read as a flag.
    if (read.swallowed) return readFlagsInto(args.slice(token.index + 1), values, issues);
  }
}

interface OptionRead {
  value?: string;
  /** The next argument was this flag's value. */
  tookFollowing?: boolean;
  /** The value parseArgs gave is the next flag. */
  swallowed?: boolean;
}

function readOption(token: OptionToken, following: string | undefined, issues: ConfigIssue[]): OptionRead {
  const setting = `--${token.name}`;
  const spec = settingByFlag(token.name);
  if (!spec) {
    issues.push({ setting, message: 'unknown flag (see --help)' });
    return { tookFollowing: token.value === undefined && following !== undefined };
  }
  if (token.value !== undefined && !(token.inlineValue === false && token.value.startsWith('--'))) return { value: token.value };
  if (spec.kind === 'boolean') {
    return following === 'true' || following === 'false' ? { value: following, tookFollowing: true } : { value: 'true' };
  }
  issues.push({ setting, message: `needs a value (written ${setting}=value)` });
  return { swallowed: token.value !== undefined };
}
