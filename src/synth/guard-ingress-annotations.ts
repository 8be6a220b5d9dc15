// Which annotations an Ingress of a rendering may carry. The ingress controller is shared by
// every environment and runs with its own (broad) credentials: an annotation is configuration
// of that controller, and some turn the author into its administrator — `*-snippet` writes raw
// nginx configuration, `auth-url` makes it call any address, `auth-tls-secret` reads a Secret of
// any namespace, `server-alias` serves another host. So: a short allow-list of harmless tuning,
// extended by the operator, and a list that no setting can allow.
import { ownershipAnnotationKeys } from '../../constructs/ownership.js';
import { deniedAnnotation } from './guard-controller-annotations.js';

const nginx = 'nginx.ingress.kubernetes.io/';

/** Allowed without configuration: request sizes and timeouts, redirects, the backend's protocol, path rewriting. */
export const defaultIngressAnnotations: readonly string[] = [
  ...[
    'proxy-body-size',
    'proxy-connect-timeout',
    'proxy-read-timeout',
    'proxy-send-timeout',
    'ssl-redirect',
    'force-ssl-redirect',
    'backend-protocol',
    'rewrite-target',
    'use-regex',
  ].map((name) => `${nginx}${name}`),
  // The operator's own, stamped on every object it renders.
  ...Object.values(ownershipAnnotationKeys),
];

/** Annotation names (after the prefix) that reach outside the Ingress, whichever controller reads them. */
const neverNames = new Set([
  'auth-url',
  'auth-signin',
  'auth-secret',
  'auth-tls-secret',
  'auth-tls-match-cn',
  'proxy-ssl-secret',
  'mirror-target',
  'mirror-host',
  'server-alias',
  'ingress.class',
  'tls-acme',
]);
/** Prefixes whose annotations pick an issuer or a certificate behind the guard's back (cert-manager's ingress-shim). */
const neverPrefixes = ['cert-manager.io/', 'acme.cert-manager.io/'];

const annotationKey =
  /^(([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*)\/)?[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$/;
// nginx configuration syntax (quotes, braces, `;`, `#`, backslashes, white space other than
// the space) has no business in a tuning value; refusing it closes value-injection holes.
const safeValue = /^[\w ./:$?=&%+~@,*^()|[\]-]{0,256}$/;

/** Why no setting may allow this annotation, or undefined. */
export function forbiddenIngressAnnotation(key: string): string | undefined {
  const name = key.slice(key.indexOf('/') + 1).toLowerCase();
  if (name.includes('snippet')) return 'snippets are raw controller configuration';
  if (name === 'ingress.class') return "the IngressClass is the operator's (spec.ingressClassName)";
  if (neverNames.has(name)) return 'it reaches outside the Ingress (other hosts, addresses or Secrets)';
  if (neverPrefixes.some((prefix) => key.startsWith(prefix)))
    return "certificates are requested through a Certificate, with the operator's issuer";
  return deniedAnnotation(key);
}

/** What is wrong with an entry of the allow-list setting, or undefined. */
export function ingressAnnotationSettingProblem(key: string): string | undefined {
  if (!annotationKey.test(key)) return `"${key}" is not an annotation key (prefix/name)`;
  const forbidden = forbiddenIngressAnnotation(key);
  return forbidden && `"${key}" can never be allowed: ${forbidden}`;
}

/** Why this annotation may not be set on a rendered Ingress, or undefined. */
export function ingressAnnotationProblem(key: string, value: unknown, allowed: ReadonlySet<string>): string | undefined {
  const forbidden = forbiddenIngressAnnotation(key);
  if (forbidden) return `annotation ${key} is never allowed: ${forbidden}`;
  if (!allowed.has(key)) return `annotation ${key} is not among the Ingress annotations previews may set`;
  if (typeof value !== 'string' || !safeValue.test(value)) {
    return `annotation ${key} has a value with characters outside letters, digits, spaces and ./:$?=&%+~@,*^()|[]_- (or longer than 256)`;
  }
  return undefined;
}
