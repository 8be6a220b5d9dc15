import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { KubeObject, ManagedFieldsEntry } from './kube-object.js';
import { FieldSetInterner } from './field-set-interner.js';
import { appliedFieldsCover, compactManagedFields, onlyManagedBy } from './managed-fields.js';

// The field set the API server recorded for the apply of `desired` (copied from a real answer).
const appliedFields = {
  'f:metadata': { 'f:labels': { 'f:app': {} } },
  'f:spec': {
    'f:replicas': {},
    'f:selector': {},
    'f:template': {
      'f:metadata': { 'f:labels': { 'f:app': {} } },
      'f:spec': {
        'f:containers': {
          'k:{"name":"web"}': {
            '.': {},
            'f:env': { 'k:{"name":"A"}': { '.': {}, 'f:name': {}, 'f:value': {} } },
            'f:image': {},
            'f:name': {},
            'f:ports': { 'k:{"containerPort":8080,"protocol":"TCP"}': { '.': {}, 'f:containerPort': {} } },
            'f:resources': { 'f:requests': { 'f:cpu': {} } },
          },
        },
      },
    },
  },
};

const desired: KubeObject = {
  apiVersion: 'apps/v1',
  kind: 'Deployment',
  metadata: { name: 'web', namespace: 'ns', labels: { app: 'web' } },
  spec: {
    replicas: 1,
    selector: { matchLabels: { app: 'web' } },
    template: {
      metadata: { labels: { app: 'web' } },
      spec: {
        containers: [
          {
            name: 'web',
            image: 'x',
            ports: [{ containerPort: 8080 }],
            env: [{ name: 'A', value: '1' }],
            resources: { requests: { cpu: '0.5' } },
          },
        ],
      },
    },
  },
};

function live(fields: object, manager = 'preview-operator', extra: ManagedFieldsEntry[] = []): KubeObject {
  return {
    ...desired,
    metadata: {
      ...desired.metadata,
      managedFields: [
        { manager, operation: 'Apply', apiVersion: 'apps/v1', fieldsType: 'FieldsV1', fieldsV1: fields as Record<string, unknown> },
        ...extra,
      ],
    },
  };
}

/**
 * The applied field set with one path removed, as after another writer took that field.
 * Like the server, a parent that only held that path goes too (`{}` would mean "owned whole").
 */
function without(path: string[]): object {
  const copy = structuredClone(appliedFields) as Record<string, unknown>;
  const parents: Record<string, unknown>[] = [copy];
  for (const key of path.slice(0, -1)) parents.push(parents.at(-1)![key] as Record<string, unknown>);
  delete parents.at(-1)![path.at(-1)!];
  for (let i = parents.length - 1; i > 0; i--) {
    if (Object.keys(parents[i]!).length === 0) delete parents[i - 1]![path[i - 1]!];
  }
  return copy;
}

describe('applied field ownership', () => {
  it('covers the desired object when every field is still ours (atomic selector, defaulted port protocol)', () => {
    assert.equal(appliedFieldsCover(live(appliedFields), desired, 'preview-operator'), true);
  });

  it('does not when a field was taken or removed by someone else', () => {
    const spec = ['f:spec', 'f:template', 'f:spec', 'f:containers', 'k:{"name":"web"}'];
    assert.equal(appliedFieldsCover(live(without([...spec, 'f:image'])), desired, 'preview-operator'), false);
    assert.equal(appliedFieldsCover(live(without([...spec, 'f:env', 'k:{"name":"A"}'])), desired, 'preview-operator'), false);
    assert.equal(appliedFieldsCover(live(without(['f:spec', 'f:replicas'])), desired, 'preview-operator'), false);
    assert.equal(appliedFieldsCover(live(without(['f:metadata', 'f:labels', 'f:app'])), desired, 'preview-operator'), false);
  });

  it('does not when the desired object has a field never applied', () => {
    const more = structuredClone(desired);
    (more.spec as { template: { spec: { containers: { env: unknown[] }[] } } }).template.spec.containers[0]!.env.push({
      name: 'B',
      value: '2',
    });
    assert.equal(appliedFieldsCover(live(appliedFields), more, 'preview-operator'), false);
    const labelled = { ...desired, metadata: { ...desired.metadata, annotations: { note: 'x' } } };
    assert.equal(appliedFieldsCover(live(appliedFields), labelled, 'preview-operator'), false);
  });

  it('looks only at the Apply entry of the named manager on the main resource', () => {
    assert.equal(appliedFieldsCover(live(appliedFields, 'someone-else'), desired, 'preview-operator'), false);
    const updateOnly: KubeObject = {
      ...desired,
      metadata: { ...desired.metadata, managedFields: [{ manager: 'preview-operator', operation: 'Update', fieldsV1: appliedFields }] },
    };
    assert.equal(appliedFieldsCover(updateOnly, desired, 'preview-operator'), false);
    const withStatus = live(appliedFields, 'preview-operator', [
      { manager: 'kube-controller-manager', operation: 'Update', subresource: 'status', fieldsV1: { 'f:status': {} } },
    ]);
    assert.equal(
      appliedFieldsCover(withStatus, { ...desired, status: { replicas: 3 } }, 'preview-operator'),
      true,
      'status is never part of an apply of the main resource',
    );
  });

  it('covers list elements the server records whole, as it does owner references', () => {
    const owner = {
      apiVersion: 'ai.alien6.io/v1',
      kind: 'Algorithm',
      name: 'reco',
      uid: 'u-1',
      controller: true,
      blockOwnerDeletion: true,
    };
    const owned = { ...desired, metadata: { ...desired.metadata, ownerReferences: [owner] } };
    // What the API server wrote for an apply carrying that owner reference (one entry per uid, owned whole).
    const fields = structuredClone(appliedFields) as Record<string, Record<string, unknown>>;
    fields['f:metadata']!['f:ownerReferences'] = { 'k:{"uid":"u-1"}': {} };
    assert.equal(appliedFieldsCover(live(fields), owned, 'preview-operator'), true);
    const otherOwner = { ...owned, metadata: { ...owned.metadata, ownerReferences: [{ ...owner, uid: 'u-2' }] } };
    assert.equal(appliedFieldsCover(live(fields), otherOwner, 'preview-operator'), false, 'a new owner is a change');
  });
});

describe('compactManagedFields', () => {
  const theirs: ManagedFieldsEntry[] = [
    { manager: 'seed', operation: 'Update', time: '2026-01-01T00:00:00Z', fieldsV1: { 'f:spec': { 'f:replicas': {} } } },
    {
      manager: 'kube-controller-manager',
      operation: 'Update',
      subresource: 'status',
      fieldsV1: { 'f:status': { 'f:conditions': { 'k:{"type":"Available"}': { 'f:status': {} } } } },
    },
    {
      manager: 'preview-operator',
      operation: 'Update',
      time: '2026-01-02T00:00:00Z',
      fieldsV1: { 'f:metadata': { 'f:finalizers': { 'v:"x"': {} } } },
    },
  ];

  it("keeps the manager's Apply entry whole and the others' field sets two levels deep, with their times", () => {
    const obj = compactManagedFields(live(appliedFields, 'preview-operator', structuredClone(theirs)), 'preview-operator');
    assert.deepEqual(obj.metadata.managedFields, [
      { manager: 'preview-operator', operation: 'Apply', apiVersion: 'apps/v1', fieldsType: 'FieldsV1', fieldsV1: appliedFields },
      theirs[0],
      { ...theirs[1], fieldsV1: { 'f:status': { 'f:conditions': {} } } },
      { ...theirs[2], fieldsV1: { 'f:metadata': { 'f:finalizers': {} } } },
    ]);
    assert.equal(appliedFieldsCover(obj, desired, 'preview-operator'), true);
    assert.equal(
      appliedFieldsCover(compactManagedFields(live(without(['f:spec', 'f:replicas'])), 'preview-operator'), desired, 'preview-operator'),
      false,
    );
  });

  it('shares the field sets of objects compacted with one interner', () => {
    const fieldSets = new FieldSetInterner();
    const [a, b] = [1, 2].map(() =>
      compactManagedFields(structuredClone(live(appliedFields, 'preview-operator', theirs)), 'preview-operator', fieldSets),
    );
    assert.equal(a!.metadata.managedFields![0]!.fieldsV1, b!.metadata.managedFields![0]!.fieldsV1);
    assert.equal(a!.metadata.managedFields![2]!.fieldsV1, b!.metadata.managedFields![2]!.fieldsV1);
    assert.deepEqual(a!.metadata.managedFields![0]!.fieldsV1, appliedFields);
    assert.equal(appliedFieldsCover(b!, desired, 'preview-operator'), true);
  });

  it('cuts every entry of an object another manager applied', () => {
    const obj = compactManagedFields(live(appliedFields, 'someone-else'), 'preview-operator');
    assert.deepEqual(obj.metadata.managedFields?.[0]?.fieldsV1, {
      'f:metadata': { 'f:labels': {} },
      'f:spec': { 'f:replicas': {}, 'f:selector': {}, 'f:template': {} },
    });
    assert.equal(compactManagedFields({ ...desired }, 'preview-operator').metadata.managedFields, undefined);
  });
});

describe('onlyManagedBy', () => {
  const entry = (manager: string, subresource?: string): ManagedFieldsEntry => ({
    manager,
    operation: subresource ? 'Update' : 'Apply',
    ...(subresource ? { subresource } : {}),
    fieldsType: 'FieldsV1',
    fieldsV1: {},
  });
  const object = (...entries: ManagedFieldsEntry[]): KubeObject => ({
    apiVersion: 'v1',
    kind: 'Namespace',
    metadata: { name: 'pr-1', managedFields: entries },
  });

  it('is true for an object only the manager has written, false once anyone else has, or when none is named', () => {
    assert.equal(onlyManagedBy(object(entry('preview-operator')), 'preview-operator'), true);
    assert.equal(onlyManagedBy(object(entry('preview-operator'), entry('kube-controller-manager', 'status')), 'preview-operator'), false);
    assert.equal(onlyManagedBy(object(entry('kubectl-client-side-apply')), 'preview-operator'), false);
    assert.equal(onlyManagedBy(object(), 'preview-operator'), false, 'no managedFields: the writer is unknown');
  });
});
