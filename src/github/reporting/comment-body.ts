// The sticky PR comment's Markdown: a pure function of the environment's report. No clock,
// nothing random, so an unchanged environment renders the same bytes (and is not re-sent).
import { ByteBudget } from '../../byte-budget.js';
import { codeBlock, codeCell, codeSpan } from './inert-markdown.js';
import type { EnvironmentState, ResourceReadiness } from './reporter.js';

export interface CommentInput {
  pullRequest: number;
  state: EnvironmentState;
  headSha: string;
  url?: string;
  deployedSha?: string;
  resources: ResourceReadiness[];
  reasons: string[];
}

/** The hidden line that identifies the operator's comment on PR `n`, found again after a restart. */
export function commentMarker(pullRequest: number): string {
  return `<!-- preview-operator:pr-${pullRequest} -->`;
}

// Bounds on what is listed. They do not bound the rendered size on their own: a code span's fence
// grows with the backtick runs of its text, and defang turns each `@` into four bytes.
const maxResources = 50;
const maxReasons = 20;
const maxReasonLength = 1000;
const maxCellLength = 200;

/**
 * The most bytes the report may have, rendered: GitHub refuses a check run whose summary is over
 * 65,535 bytes, and a comment over 65,536 characters (422, for every later update too). Room is
 * left for the comment's marker and the lines that say what was left out.
 */
export const maxReportBytes = 64_000;
const reservedBytes = 400;

/** Takes `lines` (each with its newline) from `budget` if they fit. */
function takeLines(budget: ByteBudget, lines: readonly string[]): boolean {
  return budget.take(lines.reduce((sum, line) => sum + Buffer.byteLength(line) + 1, 0));
}

const headline: Record<EnvironmentState, string> = {
  queued: '⏸️ Queued',
  'waiting-for-checks': '⏳ Waiting for checks',
  deploying: '🚧 Deploying',
  ready: '✅ Ready',
  failed: '❌ Failed',
  expired: '⌛ Expired',
  destroyed: '🗑️ Destroyed',
};

const explanation: Record<EnvironmentState, (input: CommentInput) => string> = {
  queued: () => 'The environment waits for a free slot; it starts when another environment of this repository goes away.',
  'waiting-for-checks': (i) => `Commit ${sha(i.headSha)} is deployed once its checks succeed.`,
  deploying: (i) => `Deploying commit ${sha(i.headSha)}.`,
  ready: () => 'The environment is up.',
  failed: (i) => `Commit ${sha(i.headSha)} could not be deployed.`,
  expired: () => 'The environment was removed after its time to live. Push a commit to deploy it again.',
  destroyed: () => 'The pull request was closed; the environment was removed.',
};

const sha = (value: string) => `\`${value.slice(0, 7)}\``;

function clip(text: string, max: number): string {
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}

/** Text from the cluster or a repository is not Markdown: a code span in the table, inert (see inert-markdown.ts). */
function cell(text: string): string {
  return codeCell(clip(text.replace(/\s+/g, ' ').trim(), maxCellLength));
}

/** A reason as a list item: one line as a code span, several (a log, a stack) as a fenced block inside the item. */
function reasonItem(reason: string): string[] {
  const text = clip(reason.replace(/\r\n?/g, '\n').replace(/\s+$/, ''), maxReasonLength);
  if (!text.includes('\n')) return [`- ${codeSpan(text)}`];
  const [open, ...rest] = codeBlock(text);
  return [`- ${open!}`, ...rest.map((line) => (line === '' ? '' : `  ${line}`))];
}

/** A safe https/http URL for a Markdown link, or undefined. */
function safeUrl(url: string | undefined): string | undefined {
  if (!url) return undefined;
  try {
    const parsed = new URL(url);
    return parsed.protocol === 'https:' || parsed.protocol === 'http:' ? parsed.href : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The body without the marker: also the summary of the check run. Shows the state, the URL
 * once ready (never before), the deployed SHA, the resources and, when there are any, the
 * reasons (why it failed, why it waits).
 */
export function renderReport(input: CommentInput): string {
  const lines: string[] = [`### Preview environment: ${headline[input.state]}`, '', explanation[input.state](input), ''];
  const url = input.state === 'ready' ? safeUrl(input.url) : undefined;
  if (url) lines.push(`**URL:** ${url}`, '');
  if (input.deployedSha && input.state !== 'destroyed' && input.state !== 'expired') {
    lines.push(`**Deployed commit:** ${sha(input.deployedSha)}`, '');
  }
  const budget = new ByteBudget(maxReportBytes - reservedBytes - Buffer.byteLength(lines.join('\n')));
  if (input.reasons.length > 0) {
    lines.push(input.state === 'failed' ? '**Why:**' : '**Details:**', '');
    let shown = 0;
    for (const reason of input.reasons.slice(0, maxReasons)) {
      const item = reasonItem(reason);
      if (!takeLines(budget, item)) break;
      lines.push(...item);
      shown++;
    }
    if (shown < input.reasons.length) lines.push(`- …and ${input.reasons.length - shown} more`);
    lines.push('');
  }
  if (input.resources.length > 0 && input.state !== 'destroyed' && input.state !== 'expired') {
    const header = ['| Resource | Name | Ready | Details |', '| --- | --- | --- | --- |'];
    let shown = 0;
    const rows: string[] = [];
    for (const r of takeLines(budget, header) ? input.resources.slice(0, maxResources) : []) {
      const row = `| ${cell(r.kind)} | ${cell(r.name)} | ${r.ready ? '✅' : '⏳'} | ${r.message ? cell(r.message) : ''} |`;
      if (!takeLines(budget, [row])) break;
      rows.push(row);
      shown++;
    }
    if (shown > 0) lines.push(...header, ...rows);
    if (shown < input.resources.length)
      lines.push(shown > 0 ? `| …and ${input.resources.length - shown} more | | | |` : `…and ${input.resources.length} more resources`);
    lines.push('');
  }
  return lines.join('\n').trimEnd() + '\n';
}

/** The sticky comment: the marker line, then the report. */
export function renderComment(input: CommentInput): string {
  return `${commentMarker(input.pullRequest)}\n${renderReport(input)}`;
}
