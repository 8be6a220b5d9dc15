// The operator's copy of the wildcard certificate (constructs/preview-tls.ts, `wildcard` TLS
// mode) is the one object in a preview namespace that a rendering must neither write nor read:
// its key serves every preview host. A rendered Secret of its name would fight the copy (or,
// applied first, be served for the host); a Certificate writing it would have cert-manager
// replace it; a pod mounting it would hand the shared key to the pull request's code. The name
// is reserved in every mode, so a rendering that passes in one mode passes in the other.
import type { Manifest } from '../../constructs/index.js';
import { wildcardTlsSecretName } from '../../constructs/preview-tls.js';
import { asObject, asObjects } from './guard-json.js';
import type { Violate } from './guard-rendered-objects.js';

const reserved = `the Secret ${wildcardTlsSecretName} is the operator's copy of the wildcard certificate shared by every preview`;

export function checkReservedSecret(object: Manifest, violate: Violate): void {
  if (object.metadata.name === wildcardTlsSecretName) violate('reserved-secret', `${reserved}; a rendering may not write it`);
}

export function checkReservedCertificateSecret(object: Manifest, violate: Violate): void {
  if (asObject(object.spec)?.secretName === wildcardTlsSecretName) {
    violate('reserved-secret', `spec.secretName names ${wildcardTlsSecretName}: ${reserved}; cert-manager would overwrite it`);
  }
}

/** Volumes, projected sources, env and envFrom of every container that name the reserved Secret. */
export function checkReservedSecretMounts(pod: { spec: Record<string, unknown>; path: string }, violate: Violate): void {
  const refuse = (where: string) => violate('reserved-secret', `${pod.path}.${where} names ${reserved}; no pod may read its key`);
  asObjects(pod.spec.volumes).forEach((volume, i) => {
    if (asObject(volume.secret)?.secretName === wildcardTlsSecretName) refuse(`volumes[${i}].secret`);
    asObjects(asObject(volume.projected)?.sources).forEach((source, j) => {
      if (asObject(source.secret)?.name === wildcardTlsSecretName) refuse(`volumes[${i}].projected.sources[${j}].secret`);
    });
  });
  for (const field of ['initContainers', 'containers', 'ephemeralContainers']) {
    asObjects(pod.spec[field]).forEach((container, i) => {
      asObjects(container.env).forEach((env, j) => {
        const ref = asObject(asObject(env.valueFrom)?.secretKeyRef);
        if (ref?.name === wildcardTlsSecretName) refuse(`${field}[${i}].env[${j}].valueFrom.secretKeyRef`);
      });
      asObjects(container.envFrom).forEach((source, j) => {
        if (asObject(source.secretRef)?.name === wildcardTlsSecretName) refuse(`${field}[${i}].envFrom[${j}].secretRef`);
      });
    });
  }
}
