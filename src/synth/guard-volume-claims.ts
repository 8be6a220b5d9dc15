// Volume claims a rendering may make: new volumes, provisioned for it by a StorageClass. A claim
// that binds an existing volume — by name, by a label selector, or with the empty StorageClass
// that asks for a pre-provisioned one — could take another environment's (or production's) data;
// one that copies data from another namespace reads it. Every claim is checked, wherever it
// appears: a PersistentVolumeClaim, a StatefulSet's volumeClaimTemplates, a pod's ephemeral volumes.
// Its metadata too: the beta storage-class annotation still wins over `storageClassName`, and with
// "" binds a pre-provisioned volume; the provisioner and node annotations are the binder's own.
// And its class: a claim binds any available volume of its class, so a class of volumes made by
// hand (the docs' `manual`, `local-storage`) hands them out to whoever names it. Only classes the
// operator allows (`--allowed-storage-classes`, ones that provision) may be named; unset, a claim
// gets the cluster's default class.
import type { Manifest } from '../../constructs/index.js';
import { asObject, asObjects, isSet } from './guard-json.js';
import { podTemplateOf } from './guard-pod-security.js';
import type { RenderPolicy, Violate } from './guard-rendered-objects.js';

/** Annotations on a claim that pick its volume past `spec` (the binder's, or the class's beta form). */
const bindingAnnotations = [
  'volume.beta.kubernetes.io/storage-class',
  'volume.beta.kubernetes.io/storage-provisioner',
  'volume.kubernetes.io/storage-provisioner',
  'volume.kubernetes.io/selected-node',
];

/** One claim of an object: its spec and metadata, and the prefix of their paths (`<path>spec`, `<path>metadata`). */
interface Claim {
  spec: Record<string, unknown>;
  metadata: Record<string, unknown> | undefined;
  path: string;
}

/** Every claim of an object. */
function claimsOf(object: Manifest): Claim[] {
  const found: Claim[] = [];
  const add = (claim: unknown, path: string) => {
    const spec = asObject(asObject(claim)?.spec);
    if (spec) found.push({ spec, metadata: asObject(asObject(claim)?.metadata), path });
  };
  const group = object.apiVersion.includes('/') ? object.apiVersion.slice(0, object.apiVersion.indexOf('/')) : '';
  const spec = asObject(object.spec) ?? {};
  if (group === '' && object.kind === 'PersistentVolumeClaim') add(object, '');
  if (group === 'apps' && object.kind === 'StatefulSet') {
    asObjects(spec.volumeClaimTemplates).forEach((template, i) => add(template, `spec.volumeClaimTemplates[${i}].`));
  }
  const pod = podTemplateOf(object as Manifest & { metadata: { annotations?: Record<string, string> } });
  asObjects(pod?.spec.volumes).forEach((volume, i) => {
    add(asObject(volume.ephemeral)?.volumeClaimTemplate, `${pod!.path}.volumes[${i}].ephemeral.volumeClaimTemplate.`);
  });
  return found;
}

export function checkVolumeClaims(object: Manifest, policy: RenderPolicy, violate: Violate): void {
  for (const claim of claimsOf(object)) {
    const { spec } = claim;
    const path = `${claim.path}spec`;
    const annotations = asObject(claim.metadata?.annotations) ?? {};
    for (const key of bindingAnnotations.filter((k) => k in annotations)) {
      const fix = "the StorageClass goes in spec.storageClassName (unset: the cluster's default class)";
      violate('volume-binding', `${claim.path}metadata.annotations["${key}"] chooses the claim's volume past its spec; ${fix}`);
    }
    if (isSet(spec.volumeName)) {
      violate('volume-binding', `${path}.volumeName binds an existing volume (${String(spec.volumeName)}); claims must be provisioned`);
    }
    if (spec.selector !== undefined && spec.selector !== null) {
      violate('volume-binding', `${path}.selector picks existing volumes by label; claims must be provisioned`);
    }
    const classes = policy.storageClasses ?? [];
    const fix = `leave it unset (the cluster's default class)${classes.length > 0 ? ` or name ${classes.join(', ')}` : ''}`;
    if (spec.storageClassName === '') {
      violate('volume-binding', `${path}.storageClassName "" binds a pre-provisioned volume; ${fix}`);
    } else if (isSet(spec.storageClassName) && !classes.includes(String(spec.storageClassName))) {
      const name = String(spec.storageClassName);
      violate(
        'volume-binding',
        `${path}.storageClassName "${name}" is not one the operator allows (a class of volumes made by hand binds any of them); ${fix}`,
      );
    }
    const source = asObject(spec.dataSourceRef);
    if (source?.namespace !== undefined && source.namespace !== policy.namespace) {
      violate('other-namespace', `${path}.dataSourceRef reads from namespace "${String(source.namespace)}"`);
    }
  }
}
