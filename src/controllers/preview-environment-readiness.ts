// Is the environment serving? Pure: the objects the environment applied and what the cluster
// shows of them in, per-resource readiness out. Only kinds with a notion of readiness count:
// Algorithm and Database (their controllers' Ready condition, for the generation we applied),
// Certificate (cert-manager's Ready condition) and Ingress (it exists and routes the host; no
// ingress controller is required to have published an address, since clusters differ in
// whether theirs does).
//
// Certificates: without cert-manager (the cluster serves no cert-manager.io/v1 Certificate) the
// environment renders no Certificate, serves plain HTTP and says so in a CertificateReady=False
// condition — it still becomes Ready. With cert-manager, the URL is https:// and the environment
// is Ready only once its Certificate is issued: before that, browsers would get the ingress
// controller's default certificate, which is not a working preview.
import type { ResourceReadiness } from '../../constructs/index.js';
import type { KubeObject, ObjectRef } from '../kube/index.js';
import { plainTextWithin } from '../plain-text.js';

/** The CRD's bound on `status.resources[].message`: a longer message would have every status write refused. */
const maxResourceMessageLength = 4096;

const readinessKinds = new Set([
  'ai.alien6.io/Algorithm',
  'mycompany.com/Database',
  'cert-manager.io/Certificate',
  'networking.k8s.io/Ingress',
]);

interface ConditionLike {
  type?: string;
  status?: string;
  reason?: string;
  message?: string;
  observedGeneration?: number;
}

function groupOf(apiVersion: string): string {
  return apiVersion.includes('/') ? apiVersion.slice(0, apiVersion.indexOf('/')) : '';
}

/** Whether an applied object of this kind is part of the environment's readiness. */
export function hasReadiness(ref: { apiVersion: string; kind: string }): boolean {
  return readinessKinds.has(`${groupOf(ref.apiVersion)}/${ref.kind}`);
}

function readyCondition(obj: KubeObject): ConditionLike | undefined {
  const conditions = (obj.status as { conditions?: ConditionLike[] } | undefined)?.conditions;
  return Array.isArray(conditions) ? conditions.find((c) => c.type === 'Ready') : undefined;
}

/** An Ingress is ready once it routes the host (an address is named when its controller published one). */
function ingressReadiness(base: Omit<ResourceReadiness, 'ready'>, live: KubeObject, host: string): ResourceReadiness {
  const rules = (live.spec as { rules?: { host?: string }[] } | undefined)?.rules ?? [];
  if (!rules.some((r) => r.host === host)) return { ...base, ready: false, message: `does not route ${host}` };
  const loadBalancer = (live.status as { loadBalancer?: { ingress?: { ip?: string; hostname?: string }[] } } | undefined)?.loadBalancer;
  const addresses = (loadBalancer?.ingress ?? []).map((a) => a.ip ?? a.hostname).filter(Boolean);
  return { ...base, ready: true, message: addresses.length > 0 ? `${host} at ${addresses.join(', ')}` : `routes ${host}` };
}

/**
 * The readiness of one applied object, given what the cluster shows (undefined: not there).
 * `note` leads the message of an object that is not ready (what its issuer lacks, for a Certificate).
 */
export function resourceReadiness(ref: ObjectRef, live: KubeObject | undefined, host: string, note?: string): ResourceReadiness {
  const base = { apiVersion: ref.apiVersion, kind: ref.kind, name: ref.name };
  if (!live) return { ...base, ready: false, message: 'not created yet' };
  if (live.metadata.deletionTimestamp) return { ...base, ready: false, message: 'being deleted' };
  if (ref.kind === 'Ingress') return ingressReadiness(base, live, host);
  const condition = readyCondition(live);
  const generation = live.metadata.generation;
  const observed = condition?.observedGeneration ?? (live.status as { observedGeneration?: number } | undefined)?.observedGeneration;
  const who = ref.kind === 'Certificate' ? 'cert-manager' : `the ${ref.kind} controller`;
  if (!condition) return { ...base, ready: false, message: `waiting for ${who}` };
  // A Ready condition about an older spec says nothing about the one just applied.
  if (ref.kind !== 'Certificate' && generation !== undefined && observed !== undefined && observed < generation) {
    return { ...base, ready: false, message: `waiting for ${who} to observe generation ${generation}` };
  }
  const ready = condition.status === 'True';
  const own = condition.message || condition.reason || undefined;
  const message = !ready && note ? `${note}${own ? ` (${who}: ${own})` : ''}` : own;
  return { ...base, ready, ...(message ? { message } : {}) };
}

/** Readiness of every applied object that has one, in the order given; `notes` as in resourceReadiness. */
export function environmentReadiness(
  applied: readonly ObjectRef[],
  lookup: (ref: ObjectRef) => KubeObject | undefined,
  host: string,
  notes: (ref: ObjectRef) => string | undefined = () => undefined,
): { resources: ResourceReadiness[]; ready: boolean } {
  const resources = applied.filter(hasReadiness).map((ref) => withinStatusBounds(resourceReadiness(ref, lookup(ref), host, notes(ref))));
  return { resources, ready: resources.every((r) => r.ready) };
}

/** Messages come from other controllers (cert-manager's quote an issuer's answer): plain, and within the CRD's bound. */
function withinStatusBounds(resource: ResourceReadiness): ResourceReadiness {
  return resource.message === undefined ? resource : { ...resource, message: plainTextWithin(resource.message, maxResourceMessageLength) };
}

export interface CertificateConditionInput {
  status: 'True' | 'False';
  reason: string;
  message: string;
}

/**
 * The CertificateReady condition: False with `CertManagerNotInstalled` (served over HTTP),
 * True once every rendered Certificate is issued, False with `NotIssued` before; undefined
 * when nothing is routed (no Certificate to speak of).
 */
export function certificateCondition(
  installed: boolean,
  rendered: boolean,
  certificates: readonly ResourceReadiness[],
): CertificateConditionInput | undefined {
  if (!installed) {
    return {
      status: 'False',
      reason: 'CertManagerNotInstalled',
      message:
        'cert-manager is not installed (the cluster serves no cert-manager.io/v1 Certificate): the environment is served over plain HTTP',
    };
  }
  if (!rendered) return undefined;
  const notReady = certificates.filter((c) => !c.ready);
  if (notReady.length === 0)
    return { status: 'True', reason: 'Issued', message: certificates.map((c) => `${c.name}: ${c.message ?? 'ready'}`).join('; ') };
  return { status: 'False', reason: 'NotIssued', message: notReady.map((c) => `${c.name}: ${c.message ?? 'not ready'}`).join('; ') };
}
