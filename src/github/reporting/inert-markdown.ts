// Text from a repository or the cluster (error messages, sandbox logs, policy messages that quote
// a user's values) shown in GitHub Markdown without being Markdown: always inside a code span or a
// fenced block, whose delimiters are longer than any backtick run in the text, so nothing in it
// can close them. Inside code GitHub renders no links, images or HTML and notifies no one; on top
// of that, mentions and HTML-comment delimiters are broken with an invisible character, so the
// text stays inert if it is ever shown elsewhere, and no forged `<!-- … -->` can pass for the
// sticky comment's marker. Control characters and bidirectional overrides are dropped.

import { plainText } from '../../plain-text.js';

/** Zero-width space: invisible, and it breaks `@name`, `<!--` and `-->` as tokens. */
const zws = '\u200b';

/** The text with line endings as `\n`, invisible controls dropped, and mentions and HTML-comment delimiters broken. */
export function defang(text: string): string {
  return plainText(text.replace(/\r\n?/g, '\n'))
    .replace(/@/g, `@${zws}`)
    .replace(/<!--/g, `<${zws}!--`)
    .replace(/--!?>/g, (end) => `--${zws}${end.slice(2)}`);
}

function longestBacktickRun(text: string): number {
  let longest = 0;
  for (const run of text.match(/`+/g) ?? []) longest = Math.max(longest, run.length);
  return longest;
}

/** `text` on one line as a code span. */
export function codeSpan(text: string): string {
  const line = defang(text).replace(/\s*\n\s*/g, ' ');
  const fence = '`'.repeat(longestBacktickRun(line) + 1);
  // CommonMark strips one space from each side when both are there: pad when the text itself
  // would otherwise touch the fence with a backtick or lose its own spaces.
  const pad = /^[` ]|[` ]$/.test(line) ? ' ' : '';
  return `${fence}${pad}${line}${pad}${fence}`;
}

/** `text` as a code span for a GFM table cell: its pipes escaped, which the table reads before the span. */
export function codeCell(text: string): string {
  // `\|` is an escaped pipe even inside code; a backslash of the text right before a pipe is kept
  // apart from it, so the pipe's own escape cannot be undone.
  return codeSpan(text)
    .replace(/\\(?=\|)/g, `\\${zws}`)
    .replace(/\|/g, '\\|');
}

/** `text` as the lines of a fenced code block (inside a list item, the caller indents all but the first). */
export function codeBlock(text: string): string[] {
  const body = defang(text).replace(/\n+$/, '');
  const fence = '`'.repeat(Math.max(3, longestBacktickRun(body) + 1));
  return [`${fence}text`, ...body.split('\n'), fence];
}
