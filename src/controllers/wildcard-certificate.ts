// Does a TLS Secret serve a preview's host? Pure: the Secret's data, the host and the time in,
// a reason why not (or nothing) out. The wildcard TLS modes (constructs/preview-tls.ts) have no
// per-preview Certificate whose Ready condition could say so, and the Secret may come from
// anywhere (cert-manager with a DNS-01 issuer, a bought certificate): what the ingress
// controller will serve is what is checked — the certificate in tls.crt, parsed with node's
// X509Certificate, names the host (a `*.<domain>` SAN covers one label) and is valid now.
import { X509Certificate } from 'node:crypto';
import type { KubeObject } from '../kube/index.js';

/** The keys of a kubernetes.io/tls Secret copied with it (ca.crt when the issuer adds one). */
export const tlsSecretKeys = ['tls.crt', 'tls.key', 'ca.crt'] as const;

export type SecretData = Readonly<Record<string, string>>;

export function secretData(secret: KubeObject | undefined): SecretData | undefined {
  const data = (secret as { data?: unknown } | undefined)?.data;
  return data && typeof data === 'object' ? (data as SecretData) : undefined;
}

/** The TLS fields of a Secret's data, when it holds a certificate and its key. */
export function tlsData(data: SecretData | undefined): SecretData | undefined {
  if (!data?.['tls.crt'] || !data['tls.key']) return undefined;
  return Object.fromEntries(tlsSecretKeys.flatMap((key) => (data[key] ? [[key, data[key]]] : [])));
}

/** Why the certificate in `data` does not serve `host` at `now`; undefined when it does. */
export function certificateProblem(data: SecretData | undefined, host: string, now: Date): string | undefined {
  if (!tlsData(data)) return 'holds no certificate and key (tls.crt, tls.key)';
  let certificate: X509Certificate;
  try {
    certificate = new X509Certificate(Buffer.from(data!['tls.crt']!, 'base64'));
  } catch {
    return 'tls.crt is not a PEM certificate';
  }
  if (certificate.checkHost(host) === undefined) {
    return `its certificate is for ${certificate.subjectAltName ?? certificate.subject}, which does not cover ${host}`;
  }
  if (now.getTime() < Date.parse(certificate.validFrom)) return `its certificate is not valid before ${certificate.validFrom}`;
  if (now.getTime() > Date.parse(certificate.validTo)) return `its certificate expired on ${certificate.validTo}`;
  return undefined;
}
