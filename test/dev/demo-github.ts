// The demo's GitHub: the emulator, an App installed on `demo/shop`, a repository whose `.preview/`
// is the example's, and its first pull request with the signed webhook GitHub would send.
import { randomBytes } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { GitHubEmulator } from '../github-emulator/emulator.js';
import { PullRequestDriver } from '../github-emulator/pull-requests.js';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
export const demoRepository = { owner: 'demo', name: 'shop' } as const;

export interface DemoGitHub {
  gh: GitHubEmulator;
  app: { id: number; slug: string; privateKey: string };
  repo: PullRequestDriver;
  webhookSecret: string;
}

/** Starts the emulator and the demo repository; `onStop` receives what must be undone, in order. */
export async function startDemoGitHub(onStop: (step: () => Promise<unknown>) => void): Promise<DemoGitHub> {
  const gh = await GitHubEmulator.start();
  onStop(() => gh.close());
  const app = gh.createApp({ slug: 'preview-operator-dev' });
  const webhookSecret = randomBytes(20).toString('hex');
  const preview = path.join(root, 'examples/repository/.preview');
  const repo = await PullRequestDriver.create(gh, {
    ...demoRepository,
    webhookSecret,
    initialFiles: {
      'README.md': '# shop\n\nThe demo repository of `npm run dev`.\n',
      '.preview/preview.yaml': await readFile(path.join(preview, 'preview.yaml'), 'utf8'),
      '.preview/main.ts': await readFile(path.join(preview, 'main.ts'), 'utf8'),
    },
  });
  onStop(() => repo.cleanup());
  gh.installApp(app.id, [repo.repository]);
  return { gh, app, repo, webhookSecret };
}

/** Opens pull request #1 as alice and delivers its webhook; the line says how the operator answered. */
export async function openDemoPullRequest(demo: DemoGitHub, webhookUrl: string): Promise<string> {
  const { delivery } = await demo.repo.open({
    files: { 'README.md': '# shop\n\nA change worth a preview.\n' },
    author: 'alice',
    authorAssociation: 'MEMBER',
    title: 'Try preview-operator',
  });
  // Answered 202 once queued: the PreviewEnvironment is written just after (the watch shows it).
  const answer = await delivery.deliver(webhookUrl);
  return `pull request #1 opened by alice; webhook answered ${answer.status} ${answer.body}`;
}

/** The newest comment on a pull request (#1 by default), quoted, or nothing yet. */
export function lastComment(demo: DemoGitHub, pullRequest = 1): string[] {
  const comments = demo.gh.comments(demo.repo.repository, pullRequest);
  if (comments.length === 0) return [];
  return [`the comment on pull request #${pullRequest}:`, ...comments[comments.length - 1]!.body.split('\n').map((line) => `  | ${line}`)];
}
