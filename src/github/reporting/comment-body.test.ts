import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { commentMarker, renderComment, renderReport, type CommentInput } from './comment-body.js';

const base: CommentInput = {
  pullRequest: 12,
  state: 'deploying',
  headSha: 'a1b2c3d4e5f60718293a4b5c6d7e8f9012345678',
  url: 'https://pr-12-shop.preview.example.com',
  resources: [],
  reasons: [],
};

describe('renderComment', () => {
  it("stays within GitHub's limits however the repository's text grows when made inert: the check summary's 65,535 bytes, the comment's 65,536 characters", () => {
    // Each `@` becomes four bytes (a zero-width space after it); a backtick run makes a longer fence.
    const mentions = Array.from({ length: 21 }, (_, i) => `.preview/preview.yaml: unknown field "${'@'.repeat(990)}${i}"`);
    const backticks = Array.from({ length: 21 }, (_, i) => `${'`'.repeat(976)} ${i} ${'`'.repeat(10)}`);
    const resources = Array.from({ length: 50 }, (_, i) => ({
      kind: 'Algorithm',
      name: `${'@'.repeat(190)}${i}`,
      ready: false,
      message: `${'`@'.repeat(100)}`,
    }));
    for (const reasons of [mentions, backticks]) {
      const input = { ...base, state: 'failed' as const, deployedSha: base.headSha, reasons, resources };
      const summary = renderReport(input);
      const comment = renderComment(input);
      assert.ok(Buffer.byteLength(summary) <= 65_535, `summary of ${Buffer.byteLength(summary)} bytes`);
      assert.ok(comment.length <= 65_536, `comment of ${comment.length} characters`);
      assert.match(summary, /- …and \d+ more\n/, 'what did not fit is counted, not cut mid-line');
      assert.match(summary, /^### Preview environment: ❌ Failed/);
    }
  });

  it('starts with the hidden marker of its PR, and only the marker is hidden', () => {
    const body = renderComment(base);
    assert.equal(body.split('\n')[0], '<!-- preview-operator:pr-12 -->');
    assert.equal(commentMarker(12), '<!-- preview-operator:pr-12 -->');
    assert.equal(body.match(/<!--/g)?.length, 1);
  });

  it('shows the URL once ready and never before', () => {
    for (const state of ['queued', 'waiting-for-checks', 'deploying', 'failed', 'expired', 'destroyed'] as const) {
      assert.doesNotMatch(renderComment({ ...base, state }), /preview\.example\.com/, state);
    }
    assert.match(
      renderComment({ ...base, state: 'ready', deployedSha: base.headSha }),
      /\*\*URL:\*\* https:\/\/pr-12-shop\.preview\.example\.com\//,
    );
  });

  it('names the state in the headline', () => {
    assert.match(renderComment({ ...base, state: 'ready' }), /^### Preview environment: ✅ Ready$/m);
    assert.match(renderComment({ ...base, state: 'destroyed' }), /^### Preview environment: 🗑️ Destroyed$/m);
    assert.match(renderComment({ ...base, state: 'destroyed' }), /pull request was closed/);
    assert.match(renderComment({ ...base, state: 'expired' }), /time to live/);
    assert.match(renderComment({ ...base, state: 'queued' }), /Queued/);
    assert.match(renderComment({ ...base, state: 'waiting-for-checks' }), /`a1b2c3d` is deployed once its checks succeed/);
  });

  it('shows the deployed SHA shortened, while it serves', () => {
    const body = renderComment({ ...base, state: 'deploying', deployedSha: 'ffeeddccbbaa99887766554433221100ffeeddcc' });
    assert.match(body, /\*\*Deployed commit:\*\* `ffeeddc`/);
    assert.match(body, /Deploying commit `a1b2c3d`/);
    assert.doesNotMatch(renderComment({ ...base, state: 'destroyed', deployedSha: base.headSha }), /Deployed commit/);
  });

  it('renders a resource table with readiness and messages', () => {
    const body = renderComment({
      ...base,
      resources: [
        { kind: 'Algorithm', name: 'recommender', ready: true },
        { kind: 'Database', name: 'orders', ready: false, message: 'waiting for 1 of 2 replicas' },
      ],
    });
    assert.match(body, /^\| `Algorithm` \| `recommender` \| ✅ \| {2}\|$/m);
    assert.match(body, /^\| `Database` \| `orders` \| ⏳ \| `waiting for 1 of 2 replicas` \|$/m);
  });

  it('lists the reasons of a failure, each as code', () => {
    const body = renderComment({
      ...base,
      state: 'failed',
      reasons: [
        '.preview/preview.yaml: /algorithms/0/replicas must be <= 5',
        'policy: ClusterRoleBinding "x" is not allowed <!-- preview-operator:pr-99 -->',
      ],
      resources: [{ kind: 'Database', name: 'a|b', ready: false, message: 'line1\nline2 | <b>x</b>' }],
    });
    assert.match(body, /^\*\*Why:\*\*$/m);
    assert.match(body, /^- `\.preview\/preview\.yaml: \/algorithms\/0\/replicas must be <= 5`$/m);
    assert.doesNotMatch(body, /pr-99 -->/);
    assert.match(body, /^\| `Database` \| `a\\\|b` \| ⏳ \| `line1 line2 \\\| <b>x<\/b>` \|$/m);
  });

  describe('text from the repository is inert (an attacker writes the error message)', () => {
    const zws = '\u200b';
    const attack =
      'config error: ask @acme/security-team or @everyone ![x](https://evil.example/p.png) ' +
      '[click](javascript:alert(1)) [a](https://evil.example) <img src=https://evil.example/i.png>';
    const log = 'sandbox log:\n```\n</details>\n# Owned by @mallory\n![pixel](https://evil.example/t.png)\n\n````` still inside\n';
    const body = renderComment({
      ...base,
      state: 'failed',
      reasons: [attack, log, 'bad value "``x``" <!-- preview-operator:pr-12 --> ends --> and --!> here'],
      resources: [{ kind: 'Algorithm', name: 'web', ready: false, message: 'image `a|b` @org/team ![i](https://evil.example/c.png)\\|' }],
    });
    const lines = body.split('\n');

    it('a one-line message is one code span, its mentions broken', () => {
      const expected = attack.replace(/@/g, `@${zws}`);
      assert.ok(lines.includes(`- \`${expected}\``), body);
    });

    it('a log is a fenced block inside its list item, fenced longer than any backtick run in it', () => {
      const start = lines.indexOf('- ``````text');
      assert.ok(start > 0, body);
      const end = lines.indexOf('  ``````', start);
      assert.deepEqual(lines.slice(start + 1, end), [
        '  sandbox log:',
        '  ```',
        '  </details>',
        `  # Owned by @${zws}mallory`,
        '  ![pixel](https://evil.example/t.png)',
        '',
        '  ````` still inside',
      ]);
      // Nothing between the fences could close them: no run of six backticks.
      assert.ok(lines.slice(start + 1, end).every((line) => !/`{6}/.test(line)));
    });

    it('a span holding backticks is fenced with a longer run', () => {
      assert.ok(
        lines.includes(
          '- ```bad value "``x``" <' + zws + '!-- preview-operator:pr-12 --' + zws + '> ends --' + zws + '> and --' + zws + '!> here```',
        ),
        body,
      );
    });

    it('a table cell is one code span and one cell, whatever pipes and backslashes it holds', () => {
      const row = lines.find((line) => line.startsWith('| `Algorithm`'))!;
      // Pipes not escaped by a backslash of their own are the table's: exactly five.
      assert.equal(row.replace(/\\\|/g, '').split('|').length - 1, 5, row);
      assert.equal(
        row,
        `| \`Algorithm\` | \`web\` | ⏳ | \`\`image \`a\\|b\` @${zws}org/team ![i](https://evil.example/c.png)\\${zws}\\|\`\` |`,
      );
    });

    it('no mention, no second marker, no comment delimiter outside the marker line', () => {
      assert.equal(body.match(/@(?!\u200b)/g), null, 'every @ is followed by a zero-width space');
      assert.equal(body.match(/<!--/g)?.length, 1);
      assert.equal(body.match(/--!?>/g)?.length, 1);
      assert.ok(body.startsWith(`${commentMarker(12)}\n`));
    });

    it('no image, link or HTML outside code: every reason is code', () => {
      const items = lines
        .slice(lines.indexOf('**Why:**'), lines.indexOf('| Resource | Name | Ready | Details |'))
        .filter((line) => line.startsWith('- '));
      assert.equal(items.length, 3);
      for (const item of items) assert.match(item, /^- (`+)[^`].*[^`]\1$|^- `{6}text$/, item);
    });
  });

  it('keeps the body bounded whatever the input', () => {
    const body = renderComment({
      ...base,
      state: 'failed',
      reasons: Array.from({ length: 500 }, (_, i) => `reason ${i} ${'x'.repeat(5000)}`),
      resources: Array.from({ length: 500 }, (_, i) => ({ kind: 'Algorithm', name: `a${i}`, ready: false, message: 'y'.repeat(5000) })),
    });
    assert.ok(body.length < 65_536, `${body.length}`);
    assert.match(body, /…and 480 more/);
    assert.match(body, /…and 450 more/);
  });

  it('is a pure function of its input (same input, same bytes)', () => {
    const input = {
      ...base,
      state: 'ready' as const,
      deployedSha: base.headSha,
      resources: [{ kind: 'Ingress', name: 'web', ready: true }],
    };
    assert.equal(renderComment(input), renderComment(structuredClone(input)));
    assert.notEqual(renderComment(input), renderComment({ ...input, resources: [{ kind: 'Ingress', name: 'web', ready: false }] }));
  });

  it('drops a URL that is not http(s)', () => {
    assert.doesNotMatch(renderComment({ ...base, state: 'ready', url: 'javascript:alert(1)' }), /URL/);
  });

  it('renderReport is the comment without the marker (the check run summary)', () => {
    assert.equal(renderComment(base), `${commentMarker(12)}\n${renderReport(base)}`);
  });
});
