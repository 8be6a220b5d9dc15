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
    assert.match(renderComment({ ...base, state: 'ready', deployedSha: base.headSha }), /\*\*URL:\*\* https:\/\/pr-12-shop\.preview\.example\.com\//);
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
    assert.match(body, /^\| Algorithm \| recommender \| ✅ \|  \|$/m);
    assert.match(body, /^\| Database \| orders \| ⏳ \| waiting for 1 of 2 replicas \|$/m);
  });

  it('lists the reasons of a failure, untrusted text escaped', () => {
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
    assert.match(body, /^- \.preview\/preview\.yaml: \/algorithms\/0\/replicas must be &lt;= 5$/m);
    assert.doesNotMatch(body, /pr-99 -->/);
    assert.match(body, /^\| Database \| a\\\|b \| ⏳ \| line1 line2 \\\| &lt;b&gt;x&lt;\/b&gt; \|$/m);
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
    const input = { ...base, state: 'ready' as const, deployedSha: base.headSha, resources: [{ kind: 'Ingress', name: 'web', ready: true }] };
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
