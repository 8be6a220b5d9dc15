// Why cert-manager has not issued a preview's Certificate, when the reason is its issuer. A
// Certificate whose issuer does not exist (or is not Ready) only says "Issuing certificate as
// Secret does not exist" — cert-manager names the issuer on the CertificateRequest, not on the
// Certificate — so the operator reads the issuer itself while a Certificate is not issued, and
// the environment's condition and comment name what a user has to fix.
import { NotFoundError, type KubeObject, type ObjectClient, type ObjectRef } from '../kube/index.js';

export interface IssuerRef {
  kind: 'ClusterIssuer' | 'Issuer';
  name: string;
}

interface ConditionLike {
  type?: string;
  status?: string;
  message?: string;
}

function isReady(obj: KubeObject): boolean {
  const conditions = (obj.status as { conditions?: ConditionLike[] } | undefined)?.conditions;
  return Array.isArray(conditions) && conditions.some((c) => c.type === 'Ready' && c.status === 'True');
}

/** The cert-manager issuer a Certificate names (`spec.issuerRef`; cert-manager's default kind is Issuer). */
export function certificateIssuer(certificate: KubeObject): IssuerRef | undefined {
  const ref = (certificate.spec as { issuerRef?: { name?: string; kind?: string; group?: string } } | undefined)?.issuerRef;
  if (!ref?.name || (ref.group && ref.group !== 'cert-manager.io')) return undefined;
  return { kind: ref.kind === 'ClusterIssuer' ? 'ClusterIssuer' : 'Issuer', name: ref.name };
}

/**
 * What keeps an issuer from issuing, from what the cluster shows of it: `null` when it does not
 * exist, undefined when it could not be read (then nothing is claimed). Undefined when it is Ready.
 */
export function issuerProblem(issuer: IssuerRef, live: KubeObject | null | undefined): string | undefined {
  if (live === undefined) return undefined;
  if (live === null) return `${issuer.kind} ${issuer.name} does not exist`;
  if (isReady(live)) return undefined;
  const ready = ((live.status as { conditions?: ConditionLike[] } | undefined)?.conditions ?? []).find((c) => c.type === 'Ready');
  return `${issuer.kind} ${issuer.name} is not ready${ready?.message ? `: ${ready.message}` : ''}`;
}

/** The issuer problem of each Certificate not yet issued, keyed as `certificates` is. */
export async function issuerProblems(
  client: Pick<ObjectClient, 'get'>,
  certificates: ReadonlyMap<string, KubeObject>,
): Promise<Map<string, string>> {
  const problems = new Map<string, string>();
  for (const [key, certificate] of certificates) {
    const issuer = certificateIssuer(certificate);
    if (!issuer || isReady(certificate)) continue;
    const ref: ObjectRef = { apiVersion: 'cert-manager.io/v1', kind: issuer.kind, name: issuer.name };
    if (issuer.kind === 'Issuer' && certificate.metadata.namespace) ref.namespace = certificate.metadata.namespace;
    // Not found is an answer; any other error (e.g. no RBAC to read issuers) leaves it unsaid.
    const live = await client.get(ref).catch((err) => (err instanceof NotFoundError ? null : undefined));
    const problem = issuerProblem(issuer, live);
    if (problem) problems.set(key, problem);
  }
  return problems;
}
