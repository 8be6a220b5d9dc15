// The docs and the schemas they describe stay in step: every field the policy file accepts (as
// the validator reads it) has a row in docs/configuration.md's table and a place in its example,
// which itself validates; every field of `.preview/preview.yaml`'s JSON Schema has a row in
// docs/repository-config.md, and no row names a field that does not exist.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { parse } from 'yaml';
import { previewConfigSchema } from '../constructs/index.js';
import { validatePolicyConfig } from '../src/policy/policy-validation.js';
import { validatePreviewConfig } from '../src/synth/preview-config-validation.js';

const doc = (file: string) => readFileSync(new URL(`../docs/${file}`, import.meta.url), 'utf8');

/** The text of a `## heading` section, up to the next `## `. */
function section(text: string, heading: string): string {
  const start = text.indexOf(`\n## ${heading}\n`);
  assert.ok(start >= 0, `no section "${heading}"`);
  const end = text.indexOf('\n## ', start + 1);
  return text.slice(start, end < 0 ? undefined : end);
}

/** The backticked names in the first column of the first table of `text` (`a.x`, `.y` → `a.x`, `a.y`). */
function tableFields(text: string): string[] {
  const rows = text.split('\n').filter((line) => line.startsWith('| `'));
  return rows.flatMap((row) => {
    const names = [...row.split('|')[1]!.matchAll(/`([^`]+)`/g)].map((m) => m[1]!);
    const parent = names[0]!.slice(0, names[0]!.lastIndexOf('.'));
    return names.map((name) => (name.startsWith('.') ? `${parent}${name}` : name));
  });
}

// ---- the policy file ---------------------------------------------------------------------------

/** What the validator says of an unknown key at `path`: the keys it accepts there, or none (a leaf). */
function acceptedKeys(path: string[]): string[] | undefined {
  let probe: Record<string, unknown> = { zzUnknown: 1 };
  for (const key of [...path].reverse()) probe = { [key]: probe };
  const unknown = validatePolicyConfig(probe).find((i) => i.path === [...path, 'zzUnknown'].join('.'));
  return unknown ? /expected one of: (.*)\)/.exec(unknown.message)![1]!.split(', ') : undefined;
}

/** Every field of the policy file, as dotted paths; `repositories` (the same fields per repository) as one. */
function policyFields(path: string[] = []): string[] {
  return acceptedKeys(path)!.flatMap((key) => {
    const at = [...path, key];
    return key === 'repositories' || acceptedKeys(at) === undefined ? [at.join('.')] : policyFields(at);
  });
}

/** The dotted paths of a parsed YAML object's leaves (a mapping under `repositories` is one). */
function yamlFields(value: unknown, path: string[] = []): string[] {
  if (typeof value !== 'object' || value === null || Array.isArray(value) || path.join('.') === 'repositories') return [path.join('.')];
  return Object.entries(value).flatMap(([key, inner]) => yamlFields(inner, [...path, key]));
}

describe('docs/configuration.md: the policy file', () => {
  const text = section(doc('configuration.md'), 'The policy file');
  const fields = policyFields();

  it("finds the validator's fields (the probe works)", () => {
    for (const field of ['enabled', 'filters.labels.anyOf', 'trust.approvalLabel', 'budgets.maxTtl', 'checks.require', 'repositories']) {
      assert.ok(fields.includes(field), `${field} in ${fields.join(', ')}`);
    }
  });

  it('has a table row for every field, and none for a field the validator refuses', () => {
    assert.deepEqual(tableFields(text).sort(), [...fields].sort());
  });

  it('has an example that validates and shows every field', () => {
    const example = parse(/```yaml\n([\s\S]*?)```/.exec(text)![1]!) as unknown;
    assert.deepEqual(validatePolicyConfig(example), []);
    assert.deepEqual(yamlFields(example).sort(), [...fields].sort());
  });

  it('explains waiting for CI', () => {
    assert.match(text, /### Waiting for CI \(`checks\.require`\)/);
    assert.match(text, /WaitingForChecks/);
    assert.match(text, /ChecksFailed/);
  });
});

// ---- .preview/preview.yaml ---------------------------------------------------------------------

interface SchemaNode {
  type?: string;
  properties?: Record<string, SchemaNode>;
  items?: SchemaNode;
}

/** The schema's fields as the docs name them: leaves and lists (`algorithms[]`, `algorithms[].name`), not plain objects. */
function schemaFields(node: SchemaNode, path = ''): string[] {
  if (node.type === 'array') return [`${path}[]`, ...schemaFields(node.items ?? {}, `${path}[]`)];
  if (node.type === 'object' && node.properties) {
    return Object.entries(node.properties).flatMap(([key, inner]) => schemaFields(inner, path ? `${path}.${key}` : key));
  }
  return [path];
}

describe('docs/repository-config.md: .preview/preview.yaml', () => {
  const text = doc('repository-config.md');
  const fields = schemaFields(previewConfigSchema as SchemaNode);

  it('has a row in the Fields table for every field of the schema, and none for another', () => {
    const table = text.slice(text.indexOf('### Fields'), text.indexOf('### Validation errors'));
    assert.ok(fields.includes('algorithms[].lifecycle.canaryWeight'), 'the walk reaches nested fields');
    assert.deepEqual(tableFields(table).sort(), [...fields].sort());
  });

  it('has a complete example that validates', () => {
    const example = /## `\.preview\/preview\.yaml`\n\n```yaml\n([\s\S]*?)```/.exec(text)![1]!;
    const result = validatePreviewConfig(example);
    assert.ok(result.ok, JSON.stringify(!result.ok && result.errors));
  });
});
