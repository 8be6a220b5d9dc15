import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { checkOutputShape, defaultOutputLimits, findOutputShapeProblem, type OutputLimits } from './rendered-output-limits.js';

/** `{ a: { a: ... } }`, `levels` deep, built without recursion. */
function nested(levels: number): Record<string, unknown> {
  let value: Record<string, unknown> = {};
  for (let i = 1; i < levels; i++) value = { a: value };
  return value;
}

const configMap = (name: string, data: Record<string, unknown> = {}) => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name }, data });
const bytesOf = (value: unknown) => Buffer.byteLength(JSON.stringify(value));
const limits = (overrides: Partial<OutputLimits>): OutputLimits => ({ ...defaultOutputLimits, ...overrides });

describe('the shape of a rendering', () => {
  it('refuses a 20,000-level nested answer without overflowing the stack (which structuredClone does)', () => {
    const deep = [configMap('deep', nested(20_000))];
    assert.throws(() => structuredClone(deep), RangeError, 'the hazard this check exists for');
    const started = performance.now();
    assert.equal(checkOutputShape(deep, defaultOutputLimits), 'the rendering is nested deeper than 64 levels in object 0 (ConfigMap deep)');
    assert.ok(performance.now() - started < 50, 'it stops at the limit, not at the bottom');
    // The sandbox's answer, as parsed, carries the list in `manifests`.
    assert.equal(findOutputShapeProblem({ ok: true, manifests: deep }, defaultOutputLimits)?.limit, 'depth');
  });

  it('refuses 20,000 ConfigMaps by counting, before measuring anything', () => {
    const flood = Array.from({ length: 20_000 }, (_, i) => configMap(`flood-${i}`));
    assert.equal(checkOutputShape(flood, defaultOutputLimits), 'the rendering has 20000 objects; at most 500 are allowed');
    assert.equal(findOutputShapeProblem({ ok: true, manifests: flood }, defaultOutputLimits)?.limit, 'objects');
  });

  it('measures bytes as JSON.stringify writes them, escapes and multi-byte characters included', () => {
    const rendering = [
      configMap('a', { text: 'quotes " and \\ backslashes, a tab\t, a bell \u0007, ü, €, 😀', n: 12.5, yes: true, none: null }),
      configMap('b', { list: [1, 2, [3, {}], []] }),
    ];
    const exact = bytesOf(rendering);
    assert.equal(checkOutputShape(rendering, limits({ maxBytes: exact })), undefined);
    assert.equal(checkOutputShape(rendering, limits({ maxBytes: exact - 1 })), `the rendering is larger than ${exact - 1} bytes of JSON`);
    const first = bytesOf(rendering[0]);
    assert.equal(checkOutputShape(rendering, limits({ maxObjectBytes: first })), undefined);
    assert.equal(
      findOutputShapeProblem(rendering, limits({ maxObjectBytes: first - 1 }))?.message,
      `object 0 (ConfigMap a) is larger than ${first - 1} bytes of JSON`,
    );
  });

  it('refuses a rendering over 4 MiB in all, or one object over 512 KiB, with the defaults', () => {
    const chunk = 'x'.repeat(400 * 1024);
    const many = Array.from({ length: 12 }, (_, i) => configMap(`c-${i}`, { chunk }));
    assert.equal(checkOutputShape(many, defaultOutputLimits), 'the rendering is larger than 4 MiB of JSON');
    const one = [configMap('small'), configMap('huge', { chunk: 'x'.repeat(600 * 1024) })];
    assert.equal(checkOutputShape(one, defaultOutputLimits), 'object 1 (ConfigMap huge) is larger than 512 KiB of JSON');
  });

  it('accepts what is within every limit, exactly at the depth limit too', () => {
    assert.equal(checkOutputShape([], defaultOutputLimits), undefined);
    // [ ConfigMap { data { a: ... } } ]: the list is level 1, the object 2, data 3.
    assert.equal(checkOutputShape([configMap('edge', nested(62))], defaultOutputLimits), undefined);
    assert.equal(findOutputShapeProblem([configMap('edge', nested(63))], defaultOutputLimits)?.limit, 'depth');
  });
});
