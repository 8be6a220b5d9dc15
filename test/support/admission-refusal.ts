// A ValidatingAdmissionPolicy that refuses creates and updates of one resource for one preview
// environment's objects (those with its ownership label; all of them, or those a CEL rule fails): the API server refusing a write the
// operator makes, as a cluster's own admission policy would. In force once a dry-run write of such
// an object in a namespace of its own is refused; the returned function lifts it again.
import type { KubeConfig } from '@kubernetes/client-node';
import type { KubeClient, KubeObject } from '../../src/kube/index.js';
import { createNamespace, uniqueName } from './test-cluster.js';
import { waitFor } from './wait.js';

const environmentLabel = 'preview.alien6.io/environment';
const admission = (kind: string) => ({ apiVersion: 'admissionregistration.k8s.io/v1', kind });

export interface AdmissionRefusal {
  /** The API group and plural resource refused (`{ group: 'ai.alien6.io', resource: 'algorithms' }`). */
  group: string;
  resource: string;
  /** The environment whose objects are refused. */
  environment: string;
  /** The refusal's message. */
  message: string;
  /** The CEL rule objects must pass (`object` is the object written). @default 'false': every one is refused */
  expression?: string;
  /** An object of that resource (its namespace is replaced), used to see the policy in force. */
  probe: KubeObject;
}

export async function refuseWrites(admin: KubeClient, kubeConfig: KubeConfig, refusal: AdmissionRefusal): Promise<() => Promise<void>> {
  const name = uniqueName('refuse');
  const { group, resource, environment, message, expression = 'false' } = refusal;
  await admin.apply({
    ...admission('ValidatingAdmissionPolicy'),
    metadata: { name },
    spec: {
      failurePolicy: 'Fail',
      matchConstraints: {
        resourceRules: [{ apiGroups: [group], apiVersions: ['*'], operations: ['CREATE', 'UPDATE'], resources: [resource] }],
      },
      validations: [{ expression, message }],
    },
  });
  await admin.apply({
    ...admission('ValidatingAdmissionPolicyBinding'),
    metadata: { name },
    spec: {
      policyName: name,
      validationActions: ['Deny'],
      matchResources: { objectSelector: { matchLabels: { [environmentLabel]: environment } } },
    },
  });
  const namespace = uniqueName('refuse-probe');
  await createNamespace(kubeConfig, namespace);
  const probe = {
    ...refusal.probe,
    metadata: { ...refusal.probe.metadata, namespace, labels: { ...refusal.probe.metadata.labels, [environmentLabel]: environment } },
  };
  const refused = (expected: boolean) => () =>
    admin.apply(probe, { dryRun: true }).then(
      () => !expected,
      () => expected,
    );
  await waitFor(`the admission policy refusing ${resource} in force`, refused(true));
  return async () => {
    await admin.delete({ ...admission('ValidatingAdmissionPolicyBinding'), name });
    await admin.delete({ ...admission('ValidatingAdmissionPolicy'), name });
    await waitFor(`the admission policy refusing ${resource} gone`, refused(false));
    await admin.delete({ apiVersion: 'v1', kind: 'Namespace', name: namespace });
  };
}
