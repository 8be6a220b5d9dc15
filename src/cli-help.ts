// What `preview-operator --help`, `preview-operator <command> --help` and `preview-operator help
// <command>` print. Settings are shared by the commands, so their table is one text of its own
// (`help settings`, also under `run --help`), generated from the settings table like the docs.
import { settingsReference } from './config-settings.js';

export const usage = `Usage: preview-operator <command> [--setting=value ...]

Commands:
  run      Run the operator: controllers (--controllers=...), the webhook server and the resync,
           under leader election (every replica serves webhooks; only the leader reconciles).
  synth    Print the YAML a pull request of a local repository would get:
             preview-operator synth --repo <path> [--pr <n>] [--sha <sha>] [--repository owner/name]
  renderer Serve the sandbox on a Unix socket for the operator container of the same pod (the
           chart's renderer container; needs root or the capabilities named in docs/security.md):
             preview-operator renderer --checkout-root <dir> --client-gid <gid> --sandbox-renderer-socket <path>
  help     This text, a command's (preview-operator help <command>) and every setting (preview-operator help settings).
  version  The operator's version.

preview-operator <command> --help describes a command. Every setting is a flag or an environment
variable (a flag wins); see docs/configuration.md.
`;

const settingsNote = `Settings: every one is a flag or an environment variable (a flag wins); the list is
\`preview-operator help settings\` and docs/configuration.md.
`;

const commandHelp: Record<string, () => string> = {
  run: () => `Usage: preview-operator run [--controllers=preview-environment,algorithm,database,webhook,resync] [--setting=value ...]

Runs the operator until SIGTERM or SIGINT: the controllers named by --controllers, the webhook
server and the resync, under leader election (every replica serves webhooks; only the leader
reconciles). Every setting is validated before anything starts; a bad one exits with code 2 and
names each problem. Exit codes: 0 stopped cleanly, 1 failed while running, 2 bad configuration.

Settings (flag, environment variable, default):

${settingsReference()}`,
  synth: () => `Usage: preview-operator synth --repo <path> [--pr <n>] [--sha <sha>] [--repository owner/name] [--setting=value ...]

Prints, as YAML, the objects a pull request of a local git repository would get, through the
operator's own rendering: .preview/preview.yaml validated, .preview/main.ts type-checked against
the construct library (errors as file:line:col) and then run in the sandbox, the policy checked.
Only commits are rendered: uncommitted changes are not.

  --repo <path>              a local git repository (working tree or bare); required
  --pr <n>                   the pull request number (default 1)
  --sha <sha>                the commit to render (default HEAD)
  --repository owner/name    the GitHub repository (default: from the origin remote, else local/<directory>)

Exit codes: 0 rendered, 1 the repository's configuration or code failed (every reason on
stderr), 2 bad usage.

${settingsNote}`,
  renderer:
    () => `Usage: preview-operator renderer --checkout-root <dir> --client-gid <gid> --sandbox-renderer-socket <path> [--setting=value ...]

Serves the sandbox that runs repositories' .preview/main.ts on a Unix socket, for the operator
container of the same pod (the chart's renderer container), until SIGTERM or SIGINT. Refuses to
start where the kernel isolation is not available (needs root or the capabilities named in
docs/security.md).

  --checkout-root <dir>              the checkout volume shared with the operator; required
  --client-gid <gid>                 the operator's gid, the only group that may connect; required
  --sandbox-renderer-socket <path>   where to listen; required

Exit codes: 0 stopped cleanly, 1 cannot isolate or failed, 2 bad usage.

${settingsNote}`,
  dev: () => `The local demo (a cluster, a GitHub emulator, the operator and a demo pull request) runs
from a source checkout, not from this command:

  npm ci && npm run dev            start it; then type help at its prompt
  npm run dev -- <action>          drive it from a second terminal (push, close, reopen, open,
                                   approve, unapprove)
`,
  version: () => `Usage: preview-operator version

Prints the operator's version (also: preview-operator --version).
`,
  help: () => `Usage: preview-operator help [<command> | settings]

Prints the commands, one command's help (also: preview-operator <command> --help), or every
setting with its flag, environment variable, default and meaning (help settings).
`,
  settings: () => `Settings (flag, environment variable, default):\n\n${settingsReference()}`,
};

/** The help of `topic` (a command, or `settings`); undefined for an unknown topic. */
export function helpText(topic: string | undefined): string | undefined {
  if (topic === undefined) return usage;
  return commandHelp[topic]?.();
}

/** Whether a command's arguments ask for its help (`--help`, `-h`) rather than to run it. */
export function asksForHelp(args: readonly string[]): boolean {
  // Only before a `--`, and only as a word of its own: a setting's value is never help.
  const end = args.indexOf('--');
  return (end === -1 ? args : args.slice(0, end)).some((arg) => arg === '--help' || arg === '-h');
}
