// How a rendering may be reached: Services inside the cluster only (unless the operator allows
// more), no DNS aliases, no intercepted addresses; Ingresses served by the operator's
// IngressClass, for the environment's own host, with harmless annotations only.
import type { Manifest } from '../../constructs/index.js';
import { defaultIngressAnnotations, ingressAnnotationProblem } from './guard-ingress-annotations.js';
import { asObject, asObjects, isSet } from './guard-json.js';
import type { RenderPolicy, Violate } from './guard-rendered-objects.js';

/** Service types an operator may allow besides ClusterIP; ExternalName never. */
export const optionalServiceTypes = ['LoadBalancer', 'NodePort'] as const;
export type OptionalServiceType = (typeof optionalServiceTypes)[number];

export function checkService(object: Manifest, policy: RenderPolicy, violate: Violate): void {
  const spec = asObject(object.spec) ?? {};
  const type = spec.type ?? 'ClusterIP';
  const allowed: readonly unknown[] = policy.allowedServiceTypes ?? [];
  if (type === 'ExternalName') {
    violate(
      'service-external-name',
      `type ExternalName makes the Service's name a DNS alias of "${String(spec.externalName)}" for every pod that ` +
        'resolves it; previews may not create aliases',
    );
  } else if (type !== 'ClusterIP' && !allowed.includes(type)) {
    const others = allowed.length > 0 ? ` (or ${allowed.join(', ')})` : '';
    violate('service-type', `spec.type is ${JSON.stringify(type)}; preview Services are ClusterIP${others}, reached through the Ingress`);
  }
  if (isSet(spec.externalIPs)) violate('service-external-ips', 'spec.externalIPs must not be set');
}

/** The environment's host or a name under it (`*.host` included). */
export function withinHost(name: unknown, host: string): boolean {
  return typeof name === 'string' && (name === host || name.endsWith(`.${host}`));
}

/** Checks an Ingress and sets its class to the operator's when it names none (the cluster's default class could be another). */
export function checkIngress(object: Manifest, policy: RenderPolicy, violate: Violate): void {
  if (object.spec === undefined) object.spec = {};
  const spec = asObject(object.spec) ?? {};
  if (spec.ingressClassName === undefined || spec.ingressClassName === null) spec.ingressClassName = policy.ingressClassName;
  else if (spec.ingressClassName !== policy.ingressClassName) {
    violate(
      'ingress-class',
      `spec.ingressClassName is ${JSON.stringify(spec.ingressClassName)}; previews are served by the IngressClass "${policy.ingressClassName}"`,
    );
  }
  const allowed = new Set([...defaultIngressAnnotations, ...(policy.ingressAnnotations ?? [])]);
  for (const [key, value] of Object.entries(asObject(object.metadata.annotations) ?? {})) {
    if (key === 'kubernetes.io/ingress.class') {
      violate(
        'ingress-class',
        'the annotation kubernetes.io/ingress.class picks another controller; the operator sets spec.ingressClassName',
      );
      continue;
    }
    const problem = ingressAnnotationProblem(key, value, allowed);
    if (problem) violate('ingress-annotation', problem);
  }
  checkIngressHosts(spec, policy.host, violate);
}

function checkIngressHosts(spec: Record<string, unknown>, host: string, violate: Violate): void {
  asObjects(spec.rules).forEach((rule, i) => {
    if (!withinHost(rule.host, host)) {
      violate(
        'foreign-host',
        `spec.rules[${i}].host is ${rule.host === undefined ? 'empty (every host)' : `"${String(rule.host)}"`}; it must be ${host} or a subdomain of it`,
      );
    }
  });
  asObjects(spec.tls).forEach((entry, i) => {
    for (const name of Array.isArray(entry.hosts) ? entry.hosts : []) {
      if (!withinHost(name, host))
        violate('foreign-host', `spec.tls[${i}].hosts names "${String(name)}"; it must be ${host} or a subdomain of it`);
    }
  });
  if (spec.defaultBackend !== undefined)
    violate('foreign-host', "spec.defaultBackend would serve every host; route the environment's host instead");
}
