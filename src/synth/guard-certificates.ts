// What a rendered Certificate may ask the operator's issuer for: a server certificate for the
// environment's own host names, nothing more. The issuer is shared by every environment and
// usually trusted wider than a preview: a CA certificate, a client certificate or a name other
// than a DNS name under the host would let the author speak for someone else. With TLS off there
// is no issuer of the previews': a Certificate would spend one of the cluster's.
import type { Manifest } from '../../constructs/index.js';
import { asObject, asStrings, isSet } from './guard-json.js';
import { withinHost } from './guard-network-exposure.js';
import type { RenderPolicy, Violate } from './guard-rendered-objects.js';

/** Key usages of a TLS server certificate (cert-manager's names). */
const serverUsages = new Set(['digital signature', 'key encipherment', 'key agreement', 'signing', 'server auth']);
const caUsages = new Set(['cert sign', 'crl sign']);
/** Subject alternative names and subjects other than DNS names: they are not hosts the guard can check. */
const otherNameFields = ['uris', 'ipAddresses', 'emailAddresses', 'otherNames', 'literalSubject'];

export function checkCertificate(object: Manifest, policy: RenderPolicy, violate: Violate): void {
  const spec = asObject(object.spec) ?? {};
  const names = [...(Array.isArray(spec.dnsNames) ? spec.dnsNames : []), ...(spec.commonName === undefined ? [] : [spec.commonName])];
  for (const name of names) {
    if (!withinHost(name, policy.host))
      violate('foreign-host', `it names "${String(name)}"; certificates may cover ${policy.host} and its subdomains only`);
  }
  if (spec.isCA !== undefined && spec.isCA !== false) {
    violate('certificate-ca', 'spec.isCA would make it a certificate authority under the preview issuer, able to sign for any host');
  }
  for (const usage of asStrings(spec.usages)) {
    if (caUsages.has(usage)) violate('certificate-ca', `spec.usages has "${usage}", which only a certificate authority needs`);
    else if (!serverUsages.has(usage))
      violate('certificate-usage', `spec.usages has "${usage}"; preview certificates are for serving TLS only`);
  }
  for (const field of otherNameFields) {
    if (isSet(spec[field]))
      violate('certificate-san', `spec.${field} must not be set; certificates name the environment's hosts in spec.dnsNames only`);
  }
  const issuer = asObject(spec.issuerRef) ?? {};
  const wanted = policy.certificateIssuer;
  if (!wanted) {
    // TLS off: the cluster's issuers (if cert-manager runs for other reasons) are none of the preview's.
    const name = `${String(issuer.kind ?? 'Issuer')} "${String(issuer.name)}"`;
    violate('certificate-issuer', `issuerRef is ${name}, but previews get no certificates here (TLS is off: --tls-issuer none)`);
    return;
  }
  // Another group is another issuer of the same kind and name (an external issuer's).
  const group = issuer.group ?? 'cert-manager.io';
  if (issuer.name !== wanted.name || (issuer.kind ?? 'Issuer') !== wanted.kind || (group !== 'cert-manager.io' && group !== '')) {
    violate(
      'certificate-issuer',
      `issuerRef is ${String(issuer.kind ?? 'Issuer')}.${String(group)} "${String(issuer.name)}"; previews use ${wanted.kind} "${wanted.name}"`,
    );
  }
}
