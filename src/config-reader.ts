// Reads one setting at a time, as the settings table defines it: from its flag, else its
// environment variable, else the caller's default, else the table's. A value that does not
// parse becomes an issue naming the setting, where the value came from (secrets hidden) and
// why it is wrong; the read then returns undefined and the loader goes on to the next.
import { readFileSync } from 'node:fs';
import { parseDuration } from './policy/budgets.js';
import type { ConfigIssue, LoadConfigOptions } from './config.js';
import { readFlags } from './config-flags.js';
import { settingByFlag, type SettingSpec } from './config-settings.js';

export interface RawValue {
  value: string;
  /** How the user wrote it, for messages: `--webhook-port=abc`, `PREVIEW_OPERATOR_WEBHOOK_PORT=abc`. */
  source: string;
}

export class SettingReader {
  /** Every problem found so far, in the order found. */
  readonly issues: ConfigIssue[] = [];
  private readonly flags: Map<string, string>;
  private readonly readFileText: (path: string) => string;

  constructor(private readonly options: LoadConfigOptions) {
    this.flags = readFlags(options.args, this.issues);
    this.readFileText = options.readFile ?? ((path: string) => readFileSync(path, 'utf8'));
  }

  raw(flag: string): RawValue | undefined {
    const spec = specOf(flag);
    const shown = (v: string) => (spec.kind === 'secret' ? '<hidden>' : v);
    const fromFlag = this.flags.get(flag);
    if (fromFlag !== undefined) return { value: fromFlag, source: `--${flag}=${shown(fromFlag)}` };
    const fromEnv = this.options.env[spec.env];
    // An empty variable counts as unset: Helm and Compose render unset values as "".
    if (fromEnv !== undefined && fromEnv !== '') return { value: fromEnv, source: `${spec.env}=${shown(fromEnv)}` };
    const fallback = this.options.defaults?.[flag] ?? spec.default;
    return fallback === undefined ? undefined : { value: fallback, source: `default ${shown(fallback)}` };
  }

  /** Whether the setting is given at all (a file setting: named, whether or not it can be read). */
  has(flag: string): boolean {
    return this.raw(flag) !== undefined;
  }

  problem(flag: string, message: string): void {
    const spec = specOf(flag);
    this.issues.push({ setting: `--${spec.flag} (${spec.env})`, message });
  }

  /** A problem with the value as given: the message starts with where it came from. */
  bad(flag: string, v: RawValue, reason: string): void {
    this.problem(flag, `${v.source}: ${reason}`);
  }

  str(flag: string): string | undefined {
    return this.raw(flag)?.value.trim() || undefined;
  }

  int(flag: string, min: number, max = Number.MAX_SAFE_INTEGER): number | undefined {
    const v = this.raw(flag);
    if (!v) return undefined;
    if (!/^-?\d+$/.test(v.value.trim())) return void this.bad(flag, v, 'must be a whole number');
    const n = Number(v.value);
    if (n >= min && n <= max) return n;
    return void this.bad(flag, v, max === Number.MAX_SAFE_INTEGER ? `must be at least ${min}` : `must be between ${min} and ${max}`);
  }

  bool(flag: string): boolean | undefined {
    const v = this.raw(flag);
    if (!v) return undefined;
    if (v.value === 'true') return true;
    if (v.value === 'false') return false;
    return void this.bad(flag, v, 'must be true or false');
  }

  /** Milliseconds. */
  duration(flag: string, minMs = 1): number | undefined {
    const v = this.raw(flag);
    if (!v) return undefined;
    let ms: number;
    try {
      ms = parseDuration(v.value.trim());
    } catch {
      return void this.bad(flag, v, 'must be a duration such as 30s, 5m or 1h30m (units ms, s, m, h)');
    }
    if (ms < minMs) return void this.bad(flag, v, `must be at least ${minMs >= 1000 ? `${minMs / 1000}s` : `${minMs}ms`}`);
    return ms;
  }

  /** Comma-separated, blanks dropped. */
  list(flag: string): string[] {
    return (this.raw(flag)?.value ?? '')
      .split(',')
      .map((x) => x.trim())
      .filter(Boolean);
  }

  /** An absolute http(s) URL, without a trailing slash. */
  url(flag: string): string | undefined {
    const v = this.raw(flag);
    if (!v) return undefined;
    let parsed: URL;
    try {
      parsed = new URL(v.value.trim());
    } catch {
      return void this.bad(flag, v, 'must be an absolute URL');
    }
    if (parsed.protocol !== 'https:' && parsed.protocol !== 'http:') return void this.bad(flag, v, 'must be an http(s) URL');
    return parsed.toString().replace(/\/$/, '');
  }

  /** The text of the file the setting names. */
  file(flag: string): string | undefined {
    const v = this.raw(flag);
    if (!v) return undefined;
    try {
      return this.readFileText(v.value.trim());
    } catch (err) {
      return void this.bad(flag, v, fileProblem(err));
    }
  }

  oneOf<T extends string>(flag: string, allowed: readonly T[]): T | undefined {
    const v = this.raw(flag);
    if (!v) return undefined;
    if (!allowed.includes(v.value.trim() as T)) return void this.bad(flag, v, `must be one of: ${allowed.join(', ')}`);
    return v.value.trim() as T;
  }

  /** Reads a file the configuration needs that no setting names (e.g. the pod's namespace); undefined when it cannot. */
  optionalFile(path: string): string | undefined {
    try {
      return this.readFileText(path);
    } catch {
      return undefined;
    }
  }
}

function specOf(flag: string): SettingSpec {
  const spec = settingByFlag(flag);
  if (!spec) throw new Error(`no setting --${flag} in config-settings.ts`);
  return spec;
}

function fileProblem(err: unknown): string {
  const code = (err as NodeJS.ErrnoException).code;
  if (code === 'ENOENT') return 'no such file';
  if (code === 'EACCES') return 'the file is not readable (permission denied)';
  return `cannot read the file (${(err as Error).message})`;
}

/** The Kubernetes name rules settings are checked against. */
export const names = {
  dnsLabel: /^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/,
  dnsSubdomain: /^(?=.{1,253}$)[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/,
  /** A label or taint key: an optional DNS-subdomain prefix and a name of up to 63 characters. */
  qualifiedName: /^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*\/)?[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$/,
};

export function isDnsName(name: string): boolean {
  return name.length <= 200 && name.split('.').every((label) => names.dnsLabel.test(label));
}
