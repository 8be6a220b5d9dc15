// The one context the operator uses, checked the way client-go checks the context it is about
// to use (clientcmd's ConfirmUsable), every problem listed at once. Pure: files are named
// here, read when credentials are applied.
import { KubeConfigError } from './kube-config-error.js';
import type { KubeConfigCluster, KubeConfigDocument, KubeConfigUser } from './kube-config-file.js';

export interface ResolvedCluster {
  name: string;
  /** Without trailing slashes; may carry a path prefix (a cluster behind a gateway). */
  server: string;
  caFile?: string;
  caData?: Buffer;
  insecureSkipTlsVerify: boolean;
  tlsServerName?: string;
}

export interface ResolvedUser {
  /** Empty for a context without a user (anonymous requests). */
  name: string;
  token?: string;
  tokenFile?: string;
  clientCertificateFile?: string;
  clientCertificateData?: Buffer;
  clientKeyFile?: string;
  clientKeyData?: Buffer;
}

export interface ResolvedContext {
  name: string;
  namespace?: string;
  cluster: ResolvedCluster;
  user: ResolvedUser;
}

/** No context `name` in `files`: the message lists the ones there are. */
export function unknownContext(name: string, files: readonly string[], known: readonly string[]): KubeConfigError {
  const there = known.length ? `contexts: ${known.join(', ')}` : 'it defines no contexts';
  return new KubeConfigError(`context "${name}" is not defined in ${files.join(', ')} (${there})`);
}

/**
 * The context `name` (default: the current context) with its cluster and user, or a
 * `KubeConfigError` listing every problem found in them; undefined when the cluster or the
 * user needs what only client-node reads (exec, auth-provider, basic auth, impersonation, proxy-url).
 */
export function resolveContext(doc: KubeConfigDocument, name?: string): ResolvedContext | undefined {
  const contextName = name || doc.currentContext;
  if (!contextName) throw new KubeConfigError(`kubeconfig ${doc.file} sets no current-context; choose one with --context`);
  const context = doc.contexts.get(contextName);
  if (!context) throw unknownContext(contextName, [doc.file], [...doc.contexts.keys()]);
  const problems: string[] = [];
  let cluster: KubeConfigCluster | undefined;
  if (!context.cluster) problems.push(`context "${contextName}" names no cluster`);
  else {
    cluster = doc.clusters.get(context.cluster);
    if (!cluster) problems.push(`context "${contextName}" names cluster "${context.cluster}", which ${doc.file} does not define`);
  }
  let user: KubeConfigUser | undefined;
  if (context.user) {
    user = doc.users.get(context.user);
    if (!user) problems.push(`context "${contextName}" names user "${context.user}", which ${doc.file} does not define`);
  }
  if (problems.length === 0 && (cluster?.needsClientNode || user?.needsClientNode)) return undefined;
  if (context.namespace !== undefined && !isDnsLabel(context.namespace)) {
    problems.push(`context "${contextName}": namespace "${context.namespace}" is not a valid namespace name`);
  }
  const resolvedCluster = cluster ? resolveCluster(cluster, problems) : undefined;
  const resolvedUser = user ? resolveUser(user, problems) : { name: '' };
  if (problems.length > 0 || !resolvedCluster) {
    const list = `kubeconfig context "${contextName}" cannot be used:\n  - ${problems.join('\n  - ')}`;
    throw new KubeConfigError(problems.length === 1 ? problems[0]! : list);
  }
  return { name: contextName, namespace: context.namespace, cluster: resolvedCluster, user: resolvedUser };
}

function resolveCluster(c: KubeConfigCluster, problems: string[]): ResolvedCluster | undefined {
  const where = `cluster "${c.name}"`;
  const before = problems.length;
  if (!c.server) problems.push(`${where} has no server`);
  else if (!isHttpUrl(c.server)) problems.push(`${where}: server "${c.server}" must be an https:// (or http://) URL`);
  if (c.certificateAuthority && c.certificateAuthorityData) {
    problems.push(`${where}: certificate-authority and certificate-authority-data are both set; keep one`);
  }
  if (c.insecureSkipTlsVerify && (c.certificateAuthority || c.certificateAuthorityData)) {
    problems.push(`${where}: insecure-skip-tls-verify with a certificate authority is not allowed (client-go refuses it too)`);
  }
  const caData =
    c.certificateAuthorityData === undefined
      ? undefined
      : decodeBase64(c.certificateAuthorityData, `${where}: certificate-authority-data`, problems);
  if (problems.length > before || !c.server) return undefined;
  return {
    name: c.name,
    server: c.server.replace(/\/+$/, ''),
    caFile: c.certificateAuthority,
    caData,
    insecureSkipTlsVerify: c.insecureSkipTlsVerify,
    tlsServerName: c.tlsServerName,
  };
}

function resolveUser(u: KubeConfigUser, problems: string[]): ResolvedUser {
  const where = `user "${u.name}"`;
  const user: ResolvedUser = { name: u.name, token: u.token, tokenFile: u.tokenFile };
  if (u.clientCertificate || u.clientCertificateData || u.clientKey || u.clientKeyData) {
    if (u.clientCertificate && u.clientCertificateData) {
      problems.push(`${where}: client-certificate and client-certificate-data are both set; keep one`);
    }
    if (u.clientKey && u.clientKeyData) problems.push(`${where}: client-key and client-key-data are both set; keep one`);
    if (!u.clientCertificate && !u.clientCertificateData) {
      problems.push(`${where}: a client key without client-certificate or client-certificate-data`);
    }
    if (!u.clientKey && !u.clientKeyData) problems.push(`${where}: client-key or client-key-data must be set to use a client certificate`);
    user.clientCertificateFile = u.clientCertificate;
    user.clientKeyFile = u.clientKey;
    if (u.clientCertificateData !== undefined) {
      user.clientCertificateData = decodeBase64(u.clientCertificateData, `${where}: client-certificate-data`, problems);
    }
    if (u.clientKeyData !== undefined) user.clientKeyData = decodeBase64(u.clientKeyData, `${where}: client-key-data`, problems);
  }
  return user;
}

/** Base64 as client-go decodes `[]byte` fields (standard alphabet; line breaks allowed). */
function decodeBase64(value: string, where: string, problems: string[]): Buffer | undefined {
  const compact = value.replace(/[\r\n]/g, '');
  if (!/^[A-Za-z0-9+/]*={0,2}$/.test(compact) || compact.length % 4 !== 0) {
    problems.push(`${where} is not valid base64`);
    return undefined;
  }
  return Buffer.from(compact, 'base64');
}

function isHttpUrl(value: string): boolean {
  try {
    return ['https:', 'http:'].includes(new URL(value).protocol);
  } catch {
    return false;
  }
}

function isDnsLabel(value: string): boolean {
  return value.length <= 63 && /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/.test(value);
}
