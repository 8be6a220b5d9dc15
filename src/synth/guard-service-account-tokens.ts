// API credentials a rendering may not create: a token is the ServiceAccount's permissions in a
// file, readable by whatever runs in the pod and easy to carry out of it. Previews run the
// author's images, which need no API access by default, so tokens are refused unless the
// operator allows them: long-lived token Secrets always, automounted and projected tokens
// unless `allowTokenAutomount`. A projected `podCertificate` is the same kind of credential: a
// cluster signer's certificate for the pod's identity, which other services may trust.
import type { Manifest } from '../../constructs/index.js';
import { asObject, asObjects } from './guard-json.js';
import type { RenderPolicy, Violate } from './guard-rendered-objects.js';

const tokenSecretType = 'kubernetes.io/service-account-token';
/** Annotations the token controller fills a Secret for, whatever its type. */
const tokenAnnotations = ['kubernetes.io/service-account.name', 'kubernetes.io/service-account.uid'];

export function checkSecret(object: Manifest, violate: Violate): void {
  if (object.type === tokenSecretType) {
    violate('service-account-token', `type ${tokenSecretType} makes the API server write a long-lived token into it`);
  }
  const annotations = asObject(object.metadata.annotations) ?? {};
  for (const key of tokenAnnotations) {
    if (key in annotations) violate('service-account-token', `the annotation ${key} asks for a ServiceAccount's token`);
  }
}

export function checkServiceAccount(object: Manifest, policy: RenderPolicy, violate: Violate): void {
  if (policy.allowTokenAutomount || object.automountServiceAccountToken === false) return;
  violate(
    'service-account-automount',
    'automountServiceAccountToken must be false: pods of the ServiceAccount would otherwise get its API token',
  );
}

/** A pod (template) asking for a token: `automountServiceAccountToken: true`, or a projected token or pod certificate. */
export function checkPodTokens(pod: { spec: Record<string, unknown>; path: string }, policy: RenderPolicy, violate: Violate): void {
  if (policy.allowTokenAutomount) return;
  if (pod.spec.automountServiceAccountToken === true) {
    violate(
      'service-account-automount',
      `${pod.path}.automountServiceAccountToken must not be true: the pod would get its ServiceAccount's API token`,
    );
  }
  asObjects(pod.spec.volumes).forEach((volume, i) => {
    asObjects(asObject(volume.projected)?.sources).forEach((source, j) => {
      if (source.serviceAccountToken !== undefined) {
        violate('service-account-automount', `${pod.path}.volumes[${i}].projected.sources[${j}].serviceAccountToken mounts an API token`);
      }
      if (source.podCertificate !== undefined) {
        violate(
          'service-account-automount',
          `${pod.path}.volumes[${i}].projected.sources[${j}].podCertificate mounts a cluster signer's certificate for the pod's identity`,
        );
      }
    });
  });
}
