import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { formatMicroTime } from './leader-election.js';

describe('leader election', () => {
  it('formats MicroTime with exactly six fractional digits, as the API server requires', () => {
    assert.equal(formatMicroTime(new Date('2026-03-04T05:06:07.089Z')), '2026-03-04T05:06:07.089000Z');
    assert.equal(formatMicroTime(new Date('2026-03-04T05:06:07.000Z')), '2026-03-04T05:06:07.000000Z');
  });
});
