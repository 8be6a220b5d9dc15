// Git plumbing on a bare repository, for commits no porcelain makes (a gitlink without its
// submodule): synchronous, with no system or user configuration and a fixed identity.
import { execFileSync } from 'node:child_process';

const hermetic = {
  GIT_CONFIG_NOSYSTEM: '1',
  GIT_CONFIG_GLOBAL: '/dev/null',
  GIT_AUTHOR_NAME: 't',
  GIT_AUTHOR_EMAIL: 't@example.invalid',
  GIT_COMMITTER_NAME: 't',
  GIT_COMMITTER_EMAIL: 't@example.invalid',
};

/** `git --git-dir <gitDir> <args>` with `input` on stdin; its trimmed output. */
export function bareGit(gitDir: string): (args: string[], input?: string) => string {
  return (args, input) =>
    execFileSync('git', ['--git-dir', gitDir, ...args], { encoding: 'utf8', input, env: { PATH: process.env.PATH, ...hermetic } }).trim();
}

/**
 * A commit on `parent` whose `.preview/<name>` is a gitlink to `commit` (a submodule's commit),
 * replacing any entry of that name; with `url`, a root `.gitmodules` names the submodule too.
 */
export function commitWithPreviewGitlink(gitDir: string, parent: string, link: { name: string; commit: string; url?: string }): string {
  const git = bareGit(gitDir);
  const entries = (treeish: string) => git(['ls-tree', '-z', treeish]).split('\0').filter(Boolean);
  const preview = entries(`${parent}:.preview`).filter((l) => !l.endsWith(`\t${link.name}`));
  const previewTree = git(['mktree'], [...preview, `160000 commit ${link.commit}\t${link.name}`].map((l) => `${l}\n`).join(''));
  const root = entries(parent)
    .filter((l) => !(link.url && l.endsWith('\t.gitmodules')))
    .map((l) => (l.endsWith('\t.preview') ? `040000 tree ${previewTree}\t.preview` : l));
  if (link.url) {
    const modules = git(
      ['hash-object', '-w', '--stdin'],
      `[submodule "${link.name}"]\n\tpath = .preview/${link.name}\n\turl = ${link.url}\n`,
    );
    root.push(`100644 blob ${modules}\t.gitmodules`);
  }
  return git(['commit-tree', git(['mktree'], root.map((l) => `${l}\n`).join('')), '-p', parent, '-m', 'gitlink']);
}
