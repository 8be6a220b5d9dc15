// Volume claims a rendering may make: new volumes, provisioned for it by a StorageClass. A claim
// that binds an existing volume — by name, by a label selector, or with the empty StorageClass
// that asks for a pre-provisioned one — could take another environment's (or production's) data;
// one that copies data from another namespace reads it. Every claim spec is checked, wherever it
// appears: a PersistentVolumeClaim, a StatefulSet's volumeClaimTemplates, a pod's ephemeral volumes.
import type { Manifest } from '../../constructs/index.js';
import { asObject, asObjects, isSet } from './guard-json.js';
import { podTemplateOf } from './guard-pod-security.js';
import type { RenderPolicy, Violate } from './guard-rendered-objects.js';

/** Every claim spec of an object, with its path. */
function claimSpecsOf(object: Manifest): { spec: Record<string, unknown>; path: string }[] {
  const found: { spec: Record<string, unknown>; path: string }[] = [];
  const add = (spec: unknown, path: string) => {
    const claim = asObject(spec);
    if (claim) found.push({ spec: claim, path });
  };
  const group = object.apiVersion.includes('/') ? object.apiVersion.slice(0, object.apiVersion.indexOf('/')) : '';
  const spec = asObject(object.spec) ?? {};
  if (group === '' && object.kind === 'PersistentVolumeClaim') add(spec, 'spec');
  if (group === 'apps' && object.kind === 'StatefulSet') {
    asObjects(spec.volumeClaimTemplates).forEach((template, i) => add(template.spec, `spec.volumeClaimTemplates[${i}].spec`));
  }
  const pod = podTemplateOf(object as Manifest & { metadata: { annotations?: Record<string, string> } });
  asObjects(pod?.spec.volumes).forEach((volume, i) => {
    add(asObject(asObject(volume.ephemeral)?.volumeClaimTemplate)?.spec, `${pod!.path}.volumes[${i}].ephemeral.volumeClaimTemplate.spec`);
  });
  return found;
}

export function checkVolumeClaims(object: Manifest, policy: RenderPolicy, violate: Violate): void {
  for (const { spec, path } of claimSpecsOf(object)) {
    if (isSet(spec.volumeName)) {
      violate('volume-binding', `${path}.volumeName binds an existing volume (${String(spec.volumeName)}); claims must be provisioned`);
    }
    if (spec.selector !== undefined && spec.selector !== null) {
      violate('volume-binding', `${path}.selector picks existing volumes by label; claims must be provisioned`);
    }
    if (spec.storageClassName === '') {
      const fix = 'name a StorageClass or leave it unset (the default)';
      violate('volume-binding', `${path}.storageClassName "" binds a pre-provisioned volume; ${fix}`);
    }
    const source = asObject(spec.dataSourceRef);
    if (source?.namespace !== undefined && source.namespace !== policy.namespace) {
      violate('other-namespace', `${path}.dataSourceRef reads from namespace "${String(source.namespace)}"`);
    }
  }
}
