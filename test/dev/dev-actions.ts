// What a person does to the demo's pull requests while `npm run dev` runs: push a commit, close,
// reopen, open another pull request (from a fork, so it waits for a maintainer's approval), add or
// remove the approval label. Each acts on the emulator and the demo repository as GitHub would and
// delivers the signed webhook to the operator; the watch then prints what the operator does.
import type { DemoGitHub } from './demo-github.js';

export interface DevActionContext {
  demo: DemoGitHub;
  webhookUrl: string;
  /** The label with which a maintainer approves an untrusted pull request. */
  approvalLabel: string;
}

interface DevAction {
  usage: string;
  run(context: DevActionContext, pullRequest: number): Promise<string>;
}

let pushes = 0;

/** The newest pull request of the demo repository: what an action without a number acts on. */
function newestPullRequest(demo: DemoGitHub): number {
  const next = demo.gh.repository(demo.repo.repository).nextIssueNumber;
  return Math.max(1, next - 1);
}

type Delivered = { delivery: { deliver(url: string): Promise<{ status: number; body: string }> } };

async function deliver(context: DevActionContext, change: Delivered): Promise<string> {
  const answer = await change.delivery.deliver(context.webhookUrl);
  return `webhook answered ${answer.status} ${answer.body}`;
}

const actions: Record<string, DevAction> = {
  push: {
    usage: 'push [n]        push a commit to pull request n (default: the newest); the environment redeploys',
    async run(context, n) {
      pushes += 1;
      const change = await context.demo.repo.push(
        n,
        { 'README.md': `# shop\n\nA change worth a preview, take ${pushes + 1}.\n` },
        { message: `dev: change ${pushes}` },
      );
      return `pushed ${change.pullRequest.head.sha.slice(0, 7)} to pull request #${n}; ${await deliver(context, change)}`;
    },
  },
  close: {
    usage: 'close [n]       close pull request n; its environment is torn down',
    async run(context, n) {
      return `closed pull request #${n}; ${await deliver(context, await context.demo.repo.close(n))}`;
    },
  },
  reopen: {
    usage: 'reopen [n]      reopen pull request n; its environment comes back',
    async run(context, n) {
      return `reopened pull request #${n}; ${await deliver(context, await context.demo.repo.reopen(n))}`;
    },
  },
  open: {
    usage: 'open            open another pull request, from a fork by bob: untrusted, it waits for `approve`',
    async run(context) {
      const change = await context.demo.repo.open({
        fork: 'bob',
        author: 'bob',
        authorAssociation: 'FIRST_TIME_CONTRIBUTOR',
        title: 'A contribution from a fork',
        files: { 'README.md': '# shop\n\nA contribution from a fork.\n' },
      });
      const n = change.pullRequest.number;
      return (
        `opened pull request #${n} by bob from a fork (untrusted: \`approve ${n}\` adds the label ${context.approvalLabel}); ` +
        (await deliver(context, change))
      );
    },
  },
  approve: {
    usage: 'approve [n]     add the approval label to pull request n: a maintainer approves its head commit',
    async run(context, n) {
      const change = await context.demo.repo.label(n, context.approvalLabel, { sender: 'alice' });
      return `labelled pull request #${n} ${context.approvalLabel}; ${await deliver(context, change)}`;
    },
  },
  unapprove: {
    usage: 'unapprove [n]   remove the approval label from pull request n',
    async run(context, n) {
      const change = await context.demo.repo.unlabel(n, context.approvalLabel, { sender: 'alice' });
      return `removed the label ${context.approvalLabel} from pull request #${n}; ${await deliver(context, change)}`;
    },
  },
};

export const devActionNames = [...Object.keys(actions), 'help'];

export function devActionsHelp(): string {
  return [
    'Commands (type one and Enter here, or run `npm run dev -- <command>` in another terminal):',
    ...Object.values(actions).map((a) => `  ${a.usage}`),
    '  help            this list',
  ].join('\n');
}

/** Runs one command line (`push`, `close 2`, …): the line that says what was done, or throws with why not. */
export async function runDevAction(context: DevActionContext, line: string): Promise<string> {
  const [name, number, ...rest] = line.trim().split(/\s+/);
  if (!name || name === 'help') return devActionsHelp();
  const action = actions[name];
  if (!action) throw new Error(`unknown command "${name}"; type help for the list`);
  if (rest.length > 0 || (number !== undefined && !/^[1-9]\d*$/.test(number))) throw new Error(`usage: ${action.usage}`);
  const pullRequest = number === undefined ? newestPullRequest(context.demo) : Number(number);
  if (name !== 'open') context.demo.repo.pullRequest(pullRequest); // throws for a pull request that does not exist
  return `${name}: ${await action.run(context, pullRequest)}`;
}
