// The one context the operator uses, checked the way client-go checks the context it is
// about to use (clientcmd's ConfirmUsable), plus clear refusals for what the operator does
// not support. Pure: files are named here, read when credentials are applied.
import { execApiVersions, type ExecApiVersion, type ExecPluginConfig } from './kube-exec-credential.js';
import { KubeConfigError } from './kube-config-error.js';
import type { KubeConfigCluster, KubeConfigDocument, KubeConfigUser } from './kube-config-file.js';
import { parseProxyUrl } from './kube-config-proxy-tunnel.js';

export interface ResolvedCluster {
  name: string;
  /** Without trailing slashes; may carry a path prefix (a cluster behind a gateway). */
  server: string;
  caFile?: string;
  caData?: Buffer;
  insecureSkipTlsVerify: boolean;
  tlsServerName?: string;
  proxyUrl?: string;
  disableCompression: boolean;
  execExtension?: unknown;
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
  basic?: { username: string; password: string };
  impersonation?: { user: string; uid?: string; groups: string[]; extra: Record<string, string[]> };
  exec?: ExecPluginConfig & { provideClusterInfo: boolean };
}

export interface ResolvedContext {
  name: string;
  namespace?: string;
  cluster: ResolvedCluster;
  user: ResolvedUser;
}

const legacyAuthProvider = (user: string, provider: string) =>
  `user "${user}" uses auth-provider "${provider}": legacy auth providers are not supported (client-go removed the gcp and azure ones in Kubernetes 1.26); use an exec credential plugin instead (gke-gcloud-auth-plugin, kubelogin, aws eks get-token, …)`;

/**
 * The context `name` (default: the current context) with its cluster and user, or a
 * `KubeConfigError` listing every problem found in them.
 */
export function resolveContext(doc: KubeConfigDocument, name?: string): ResolvedContext {
  const files = doc.files.join(', ');
  const contextName = name || doc.currentContext;
  if (!contextName) throw new KubeConfigError(`kubeconfig ${files} sets no current-context; choose one with --context`);
  const context = doc.contexts.get(contextName);
  if (!context) {
    const known = [...doc.contexts.keys()];
    throw new KubeConfigError(`context "${contextName}" is not defined in ${files} (${known.length ? `contexts: ${known.join(', ')}` : 'it defines no contexts'})`);
  }
  const problems: string[] = [];
  let cluster: KubeConfigCluster | undefined;
  if (!context.cluster) problems.push(`context "${contextName}" names no cluster`);
  else {
    cluster = doc.clusters.get(context.cluster);
    if (!cluster) problems.push(`context "${contextName}" names cluster "${context.cluster}", which ${files} does not define`);
  }
  let user: KubeConfigUser | undefined;
  if (context.user) {
    user = doc.users.get(context.user);
    if (!user) problems.push(`context "${contextName}" names user "${context.user}", which ${files} does not define`);
  }
  if (context.namespace !== undefined && !isDnsLabel(context.namespace)) {
    problems.push(`context "${contextName}": namespace "${context.namespace}" is not a valid namespace name`);
  }
  const resolvedCluster = cluster ? resolveCluster(cluster, problems) : undefined;
  const resolvedUser = user ? resolveUser(user, problems) : { name: '' };
  if (problems.length > 0 || !resolvedCluster) {
    throw new KubeConfigError(problems.length === 1 ? problems[0]! : `kubeconfig context "${contextName}" cannot be used:\n  - ${problems.join('\n  - ')}`);
  }
  return { name: contextName, namespace: context.namespace, cluster: resolvedCluster, user: resolvedUser };
}

function resolveCluster(c: KubeConfigCluster, problems: string[]): ResolvedCluster | undefined {
  const where = `cluster "${c.name}"`;
  const before = problems.length;
  let server: URL | undefined;
  if (!c.server) problems.push(`${where} has no server`);
  else {
    try {
      server = new URL(c.server);
    } catch {
      // Not a URL: reported below.
    }
    if (!server || (server.protocol !== 'https:' && server.protocol !== 'http:')) {
      problems.push(`${where}: server "${c.server}" must be an https:// (or http://) URL`);
    }
  }
  if (c.certificateAuthority && c.certificateAuthorityData) {
    problems.push(`${where}: certificate-authority and certificate-authority-data are both set; keep one`);
  }
  if (c.insecureSkipTlsVerify && (c.certificateAuthority || c.certificateAuthorityData)) {
    problems.push(`${where}: insecure-skip-tls-verify with a certificate authority is not allowed (client-go refuses it too)`);
  }
  const caData = c.certificateAuthorityData === undefined ? undefined : decodeBase64(c.certificateAuthorityData, `${where}: certificate-authority-data`, problems);
  if (c.proxyUrl !== undefined) {
    const proxy = parseProxyUrl(c.proxyUrl);
    if ('problem' in proxy) problems.push(`${where}: ${proxy.problem}`);
    else if (server?.protocol === 'http:') problems.push(`${where}: proxy-url is supported for https:// servers only`);
  }
  if (problems.length > before || !c.server) return undefined;
  return {
    name: c.name,
    server: c.server.replace(/\/+$/, ''),
    caFile: c.certificateAuthority,
    caData,
    insecureSkipTlsVerify: c.insecureSkipTlsVerify,
    tlsServerName: c.tlsServerName,
    proxyUrl: c.proxyUrl,
    disableCompression: c.disableCompression,
    execExtension: c.execExtension,
  };
}

function resolveUser(u: KubeConfigUser, problems: string[]): ResolvedUser {
  const where = `user "${u.name}"`;
  const user: ResolvedUser = { name: u.name, token: u.token, tokenFile: u.tokenFile };
  if (u.authProvider !== undefined) problems.push(legacyAuthProvider(u.name, u.authProvider));

  const methods = [u.token ? 'token' : '', u.username || u.password ? 'username/password' : ''].filter(Boolean);
  if (methods.length > 1) problems.push(`${where}: more than one authentication method (${methods.join(', ')}); only one is allowed`);
  if (u.username || u.password) user.basic = { username: u.username ?? '', password: u.password ?? '' };

  if (u.clientCertificate || u.clientCertificateData || u.clientKey || u.clientKeyData) {
    if (u.clientCertificate && u.clientCertificateData) problems.push(`${where}: client-certificate and client-certificate-data are both set; keep one`);
    if (u.clientKey && u.clientKeyData) problems.push(`${where}: client-key and client-key-data are both set; keep one`);
    if (!u.clientCertificate && !u.clientCertificateData) problems.push(`${where}: a client key without client-certificate or client-certificate-data`);
    if (!u.clientKey && !u.clientKeyData) problems.push(`${where}: client-key or client-key-data must be set to use a client certificate`);
    user.clientCertificateFile = u.clientCertificate;
    user.clientKeyFile = u.clientKey;
    if (u.clientCertificateData !== undefined) user.clientCertificateData = decodeBase64(u.clientCertificateData, `${where}: client-certificate-data`, problems);
    if (u.clientKeyData !== undefined) user.clientKeyData = decodeBase64(u.clientKeyData, `${where}: client-key-data`, problems);
  }

  if (u.impersonate) {
    user.impersonation = { user: u.impersonate, uid: u.impersonateUid, groups: u.impersonateGroups, extra: u.impersonateUserExtra };
  } else if (u.impersonateGroups.length > 0 || Object.keys(u.impersonateUserExtra).length > 0 || u.impersonateUid) {
    problems.push(`${where}: as-groups, as-uid or as-user-extra without as (the user to impersonate)`);
  }

  if (u.exec && u.authProvider === undefined) {
    const e = u.exec;
    const start = problems.length;
    if (!e.command) problems.push(`${where}: exec has no command`);
    if (!e.apiVersion) problems.push(`${where}: exec has no apiVersion (use ${execApiVersions[0]})`);
    else if (!(execApiVersions as readonly string[]).includes(e.apiVersion)) {
      problems.push(`${where}: exec apiVersion "${e.apiVersion}" is not supported (use ${execApiVersions.join(' or ')})`);
    }
    if (e.env.some((v) => !v.name)) problems.push(`${where}: an exec env entry has no name`);
    // client-go requires the mode from v1 on, and defaults it to IfAvailable before.
    const mode = e.interactiveMode ?? (e.apiVersion === 'client.authentication.k8s.io/v1' ? undefined : 'IfAvailable');
    if (mode === undefined) problems.push(`${where}: exec interactiveMode must be set for ${e.apiVersion} (Never, or IfAvailable)`);
    else if (mode === 'Always') problems.push(`${where}: exec interactiveMode Always needs a terminal, which the operator never gives a plugin; use Never or IfAvailable`);
    else if (mode !== 'Never' && mode !== 'IfAvailable') problems.push(`${where}: exec interactiveMode "${mode}" is not one of Never, IfAvailable, Always`);
    if (problems.length === start) {
      user.exec = {
        command: e.command!, args: e.args, env: e.env, apiVersion: e.apiVersion as ExecApiVersion,
        installHint: e.installHint, provideClusterInfo: e.provideClusterInfo,
      };
    }
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

function isDnsLabel(value: string): boolean {
  return value.length <= 63 && /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/.test(value);
}
