import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { codeBlock, codeCell, codeSpan, defang } from './inert-markdown.js';

const zws = '\u200b';

/** The longest run of backticks in `text`. */
const longestRun = (text: string) => Math.max(0, ...(text.match(/`+/g) ?? []).map((run) => run.length));

describe('defang', () => {
  it('breaks mentions and HTML-comment delimiters with an invisible character', () => {
    assert.equal(defang('@user @org/team a@b'), `@${zws}user @${zws}org/team a@${zws}b`);
    assert.equal(defang('<!-- x --> y --!>'), `<${zws}!-- x --${zws}> y --${zws}!>`);
  });

  it('drops control and bidirectional override characters, and normalises line endings', () => {
    assert.equal(defang('a\u0000b\u001bc\u202ed\u2066e\r\nf\rg\th'), 'abcde\nf\ng\th');
  });
});

describe('codeSpan', () => {
  it('fences with one backtick more than the longest run inside', () => {
    for (const text of ['plain', 'one ` tick', 'two `` ticks', 'five ````` and `` two', '`edge`']) {
      const span = codeSpan(text);
      const fence = span.match(/^`+/)![0];
      assert.equal(fence.length, longestRun(text) + 1, span);
      assert.ok(span.endsWith(fence), span);
      assert.equal(longestRun(span.slice(fence.length, -fence.length)), longestRun(text), span);
    }
  });

  it('pads a text that starts or ends with a backtick or a space (CommonMark strips one space each side)', () => {
    assert.equal(codeSpan('`x'), '`` `x ``');
    assert.equal(codeSpan(' x '), '`  x  `');
    assert.equal(codeSpan('x'), '`x`');
  });

  it('keeps to one line, so no block (heading, list, fence) can start inside it', () => {
    assert.equal(codeSpan('a\n# heading\n\n- item\r\n```'), '```` a # heading - item ``` ````');
  });
});

describe('codeCell', () => {
  it('escapes every pipe so the table reads one cell, a backslash before a pipe included', () => {
    assert.equal(codeCell('a|b'), '`a\\|b`');
    assert.equal(codeCell('a\\|b'), `\`a\\${zws}\\|b\``);
    assert.equal(codeCell('a\\\\|b'), `\`a\\\\${zws}\\|b\``);
  });
});

describe('codeBlock', () => {
  it('fences with at least three backticks and more than any run inside', () => {
    assert.deepEqual(codeBlock('x'), ['```text', 'x', '```']);
    assert.deepEqual(codeBlock('```\ny\n````\n\n'), ['`````text', '```', 'y', '````', '`````']);
  });
});
