// Every setting of the operator, once: its flag, its environment variable, its default and
// what it means. The loader, `--help`, docs/configuration.md and the Helm chart's values all
// follow this table, so a setting cannot exist in one place and be missing in another.

export type SettingKind = 'string' | 'integer' | 'boolean' | 'duration' | 'list' | 'url' | 'file' | 'secret';

export interface SettingSpec {
  /** The flag without dashes, e.g. `webhook-port`. */
  flag: string;
  /** The environment variable; a flag given on the command line wins over it. */
  env: string;
  kind: SettingKind;
  /** As it would be written on the command line; absent: unset unless given. */
  default?: string;
  group: string;
  description: string;
}

import { defaultAllowedKinds } from './synth/guard-allowed-kinds.js';
import { defaultOutputLimits } from './synth/rendered-output-limits.js';

const env = (flag: string) => `PREVIEW_OPERATOR_${flag.toUpperCase().replace(/-/g, '_')}`;

function setting(
  flag: string,
  kind: SettingKind,
  group: string,
  description: string,
  defaultValue?: string,
  envName = env(flag),
): SettingSpec {
  return { flag, env: envName, kind, group, description, ...(defaultValue !== undefined ? { default: defaultValue } : {}) };
}

export const controllerNames = ['algorithm', 'database', 'preview-environment', 'webhook', 'resync'] as const;
export type ControllerName = (typeof controllerNames)[number];

export const settings: readonly SettingSpec[] = [
  setting(
    'kubeconfig',
    'file',
    'Kubernetes',
    'Kubeconfig file, or several separated by ":" (merged as kubectl merges them); unset: the in-cluster ServiceAccount, then ~/.kube/config.',
    undefined,
    'KUBECONFIG',
  ),
  setting('context', 'string', 'Kubernetes', 'Context of the kubeconfig to use (default: its current context).'),

  setting(
    'controllers',
    'list',
    'Process',
    `What this process runs, comma-separated: ${controllerNames.join(', ')}.`,
    controllerNames.join(','),
  ),
  setting(
    'watch-namespace',
    'string',
    'Process',
    'The Algorithm and Database controllers watch this namespace only (default: all namespaces).',
  ),
  setting(
    'preview-environment-workers',
    'integer',
    'Process',
    'PreviewEnvironments reconciled at once (each mostly waits on git, the API server and GitHub).',
    '12',
  ),
  setting('algorithm-workers', 'integer', 'Process', 'Algorithms reconciled at once.', '4'),
  setting('database-workers', 'integer', 'Process', 'Databases reconciled at once.', '4'),
  setting('log-level', 'string', 'Process', 'debug, info, warn or error.', 'info'),
  setting(
    'drain-timeout',
    'duration',
    'Process',
    'On SIGTERM: how long in-flight reconciles and webhooks may take before the process exits anyway.',
    '25s',
  ),
  setting(
    'metrics-port',
    'integer',
    'Process',
    'Port of GET /metrics (Prometheus); the same as --webhook-port serves it there (0: any free port).',
    '9090',
  ),

  setting(
    'leader-elect',
    'boolean',
    'Leader election',
    'Only the replica holding the Lease reconciles (every replica serves webhooks).',
    'true',
  ),
  setting(
    'leader-election-namespace',
    'string',
    'Leader election',
    'Namespace of the Lease (default: the pod\'s namespace, else "default").',
  ),
  setting('leader-election-lease', 'string', 'Leader election', 'Name of the Lease.', 'preview-operator'),
  setting(
    'leader-election-identity',
    'string',
    'Leader election',
    "This replica's identity in the Lease (default: the host name, i.e. the pod name).",
  ),
  setting('leader-election-lease-duration', 'duration', 'Leader election', 'How long a Lease not renewed stays with its holder.', '15s'),
  setting(
    'leader-election-renew-deadline',
    'duration',
    'Leader election',
    'How long the leader tries to renew before it gives up (it stops reconciling and campaigns again; webhooks are still answered).',
    '10s',
  ),
  setting(
    'leader-election-retry-period',
    'duration',
    'Leader election',
    'How often candidates try to take the Lease and the leader renews it.',
    '2s',
  ),

  setting('webhook-host', 'string', 'Webhook', 'Address the webhook server listens on.', '0.0.0.0'),
  setting('webhook-port', 'integer', 'Webhook', 'Port of the webhook server, also /healthz and /readyz (0: any free port).', '8080'),
  setting('webhook-path', 'string', 'Webhook', 'Path GitHub posts deliveries to.', '/api/github/webhooks'),
  setting('webhook-secret', 'secret', 'Webhook', 'The webhook secret (comma-separated during a rotation). Prefer --webhook-secret-file.'),
  setting('webhook-secret-file', 'file', 'Webhook', 'File holding the webhook secret (one per line during a rotation).'),
  setting(
    'webhook-max-body-bytes',
    'integer',
    'Webhook',
    'Larger deliveries are refused with 413. The events the operator reads are tens of kilobytes; GitHub sends at most 25 MB.',
    String(1024 * 1024),
  ),
  setting(
    'webhook-max-body-bytes-in-flight',
    'integer',
    'Webhook',
    'All the deliveries being read at once, signed or not (their signatures are checked once read); ' +
      'one that would go past it is answered 503 (GitHub can redeliver it).',
    String(32 * 1024 * 1024),
  ),
  setting('webhook-dedupe-window', 'duration', 'Webhook', 'A delivery id seen again within this window is answered without effect.', '1h'),

  setting(
    'dashboard',
    'boolean',
    'Dashboard',
    'Serve the read-only web dashboard of every PreviewEnvironment (live; never a secret value) on --dashboard-port.',
    'true',
  ),
  setting(
    'dashboard-port',
    'integer',
    'Dashboard',
    'Port of the dashboard, on --dashboard-host; a port of its own, reached with kubectl port-forward (0: any free port).',
    '8081',
  ),
  setting(
    'dashboard-host',
    'string',
    'Dashboard',
    'Address the dashboard listens on. The default, loopback, lets only kubectl port-forward and containers of the pod in: ' +
      'the dashboard has no login. 0.0.0.0 lets anyone who reaches the pod read it (a proxy of your own in front).',
    '127.0.0.1',
  ),

  setting(
    'github-api-url',
    'url',
    'GitHub',
    'REST API base URL (GitHub Enterprise Server: https://<host>/api/v3).',
    'https://api.github.com',
  ),
  setting('github-app-id', 'string', 'GitHub', 'GitHub App id (with --github-app-private-key-file).'),
  setting('github-app-private-key-file', 'file', 'GitHub', "The GitHub App's private key (PEM)."),
  setting('github-app-installation-id', 'integer', 'GitHub', "The App's installation (default: looked up per repository)."),
  setting(
    'github-token',
    'secret',
    'GitHub',
    'A token instead of an App (commit statuses instead of check runs). Prefer --github-token-file.',
  ),
  setting('github-token-file', 'file', 'GitHub', 'File holding the token.'),
  setting('github-throttle', 'boolean', 'GitHub', 'Space writes as GitHub asks (≥ 1 s apart per credential).', 'true'),
  setting('github-max-retry-after', 'duration', 'GitHub', 'Longest rate-limit wait accepted before a request fails instead.', '60s'),

  setting(
    'policy-file',
    'file',
    'Policy',
    'YAML file with the filters, trust and budget policy, global and per repository (see docs/configuration.md).',
  ),
  setting(
    'default-ttl',
    'duration',
    'Policy',
    "How long an environment lives after its last deployment; overrides the policy file's global budgets.ttl (default there: 72h).",
  ),
  setting(
    'max-environments-per-repository',
    'integer',
    'Policy',
    "Environments one repository may run at once (0: no cap); overrides the policy file's global budgets.maxEnvironmentsPerRepository.",
  ),

  setting(
    'checkout-cache-dir',
    'string',
    'Checkout',
    'Directory of the git cache (bare repositories and worktrees); writable, may be an emptyDir.',
    '/tmp/preview-operator/checkouts',
  ),
  setting('git-concurrency', 'integer', 'Checkout', 'git processes allowed to run at once.', '4'),
  setting('git-timeout', 'duration', 'Checkout', 'A git process silent for this long is killed.', '120s'),
  setting('git-allowed-protocols', 'list', 'Checkout', 'URL schemes a clone URL may use (https; file for local demos and tests).', 'https'),

  setting('sandbox-timeout', 'duration', 'Sandbox', "Wall-clock limit of one run of a repository's .preview/main.ts.", '20s'),
  setting('sandbox-max-heap-mb', 'integer', 'Sandbox', 'V8 heap limit of the sandbox process (MB).', '256'),
  setting('sandbox-max-rss-mb', 'integer', 'Sandbox', 'Resident memory limit of the sandbox process (MB).', '512'),
  setting(
    'sandbox-concurrency',
    'integer',
    'Sandbox',
    'Sandbox processes allowed to run at once (each up to --sandbox-max-rss-mb); more renders wait.',
    '2',
  ),
  setting(
    'sandbox-renderer-socket',
    'file',
    'Sandbox',
    'Unix socket of the renderer container (`preview-operator renderer`) that runs repository code; unset: this process runs it, isolated by the kernel (needs root or CAP_SYS_ADMIN, CAP_SETUID, CAP_SETGID, CAP_CHOWN, CAP_KILL).',
  ),

  setting(
    'preview-domain',
    'string',
    'Previews',
    'DNS domain of preview hosts: <repo>-pr-<n>-<repository hash>.<domain>. Required by the preview-environment controller.',
  ),
  setting('ingress-class', 'string', 'Previews', 'IngressClass of preview Ingresses.', 'nginx'),
  setting(
    'tls-issuer',
    'string',
    'Previews',
    'cert-manager issuer of preview certificates; "none" serves plain HTTP and renders no Certificate.',
    'preview-issuer',
  ),
  setting('tls-issuer-kind', 'string', 'Previews', 'ClusterIssuer or Issuer.', 'ClusterIssuer'),
  setting(
    'tls-mode',
    'string',
    'Previews',
    "Where preview certificates come from: per-preview (a Certificate each, from --tls-issuer), wildcard (the Secret of one certificate for *.<domain>, --tls-wildcard-secret, copied into each preview namespace and kept in step) or ingress-default (that Secret is the ingress controller's default certificate: nothing copied). Trade-offs: docs/install.md#tls.",
    'per-preview',
  ),
  setting(
    'tls-wildcard-secret',
    'string',
    'Previews',
    'The Secret of the wildcard certificate for *.<domain>, as <namespace>/<name>; required by --tls-mode=wildcard and ingress-default.',
  ),
  setting(
    'environment-selector',
    'string',
    'Previews',
    'Only PreviewEnvironments matching this label selector (default: all); for two operators side by side.',
  ),
  setting(
    'pod-security',
    'string',
    'Previews',
    'Pod Security level enforced in preview namespaces (restricted, baseline or privileged).',
    'restricted',
  ),
  setting(
    'allowed-kinds',
    'list',
    'Previews',
    'Kinds a rendering may contain, Kind or Kind.group, comma-separated (namespaced kinds only).',
    defaultAllowedKinds.join(','),
  ),

  setting(
    'allowed-service-types',
    'list',
    'Rendering policy',
    'Service types a rendering may use besides ClusterIP: LoadBalancer, NodePort (default none; ExternalName never).',
  ),
  setting(
    'allowed-ingress-annotations',
    'list',
    'Rendering policy',
    'Ingress annotations a rendering may set besides the built-in safe ones (see "The rendering policy"); snippets, auth-url and the like never.',
  ),
  setting(
    'allow-token-automount',
    'boolean',
    'Rendering policy',
    'ServiceAccounts and pods of a rendering may mount API tokens (false: ServiceAccounts must set automountServiceAccountToken: false).',
    'false',
  ),
  setting(
    'allowed-priority-classes',
    'list',
    'Rendering policy',
    "PriorityClasses pods of a rendering may name (default none: the cluster's default priority; a class could preempt other namespaces' pods).",
  ),
  setting(
    'allowed-toleration-keys',
    'list',
    'Rendering policy',
    'Taint keys pods of a rendering may tolerate (default none but the node conditions and the extended resources they request that the quota bounds, e.g. nvidia.com/gpu).',
  ),
  setting(
    'allowed-runtime-classes',
    'list',
    'Rendering policy',
    "RuntimeClasses pods of a rendering may name (default none: the cluster's default runtime; a class brings its own tolerations and node selector).",
  ),
  setting(
    'allowed-storage-classes',
    'list',
    'Rendering policy',
    "StorageClasses a rendering's volume claims may name (default none: claims leave it unset and get the cluster's default class; a class of volumes made by hand, such as manual, binds any of them).",
  ),
  setting(
    'allowed-csi-drivers',
    'list',
    'Rendering policy',
    "CSI drivers pods of a rendering may use in inline volumes (default none: a driver acts on a volume's attributes with its own identity, e.g. cert-manager's csi-driver issuing for any name).",
  ),
  setting(
    'max-rendered-objects',
    'integer',
    'Rendering policy',
    'Objects one rendering may contain.',
    String(defaultOutputLimits.maxObjects),
  ),
  setting(
    'max-rendered-bytes',
    'integer',
    'Rendering policy',
    'Bytes of JSON one rendering may have in all.',
    String(defaultOutputLimits.maxBytes),
  ),
  setting(
    'max-rendered-object-bytes',
    'integer',
    'Rendering policy',
    'Bytes of JSON one rendered object may have.',
    String(defaultOutputLimits.maxObjectBytes),
  ),
  setting(
    'max-rendered-depth',
    'integer',
    'Rendering policy',
    'How deeply a rendering may nest arrays and objects.',
    String(defaultOutputLimits.maxDepth),
  ),

  setting(
    'prometheus-url',
    'url',
    'Canary analysis',
    'Prometheus-compatible API (…/api/v1/query) giving canary success rates; unset: canaries never promote by analysis.',
  ),
  setting('canary-query', 'string', 'Canary analysis', "PromQL template of a canary's success rate (default: the Algorithm controller's)."),
  setting('canary-analysis-interval', 'duration', 'Canary analysis', 'How often a canary is analysed.', '60s'),
  setting(
    'canary-success-checks',
    'integer',
    'Canary analysis',
    "Consecutive analyses at or above the Algorithm's successThreshold that promote a canary.",
    '3',
  ),
  setting(
    'canary-failure-threshold',
    'integer',
    'Canary analysis',
    'Consecutive failing (or empty) analyses before a rollback (or Inconclusive).',
    '5',
  ),
  setting(
    'canary-traffic',
    'string',
    'Canary analysis',
    '"replicas" (split by replica ratio) or "httproute" (exact weights through a Gateway API HTTPRoute).',
    'replicas',
  ),
  setting(
    'latency-metric',
    'string',
    'Canary analysis',
    "Per-pod custom metric the HPA targets when an Algorithm sets targetLatencyMs (default: the Algorithm controller's).",
  ),

  setting('resync-interval', 'duration', 'Resync', 'How often open pull requests are listed to repair missed webhooks.', '5m'),
  setting('resync-max-deletions', 'integer', 'Resync', 'Most environments one resync pass may delete (more is reported, not done).', '10'),
];

export function settingByFlag(flag: string): SettingSpec | undefined {
  return settings.find((s) => s.flag === flag);
}

/** The reference table of docs/configuration.md, generated from `settings`. */
export function settingsReference(): string {
  const out: string[] = [];
  let group = '';
  for (const s of settings) {
    if (s.group !== group) {
      group = s.group;
      out.push('', `### ${group}`, '', '| flag | environment variable | default | meaning |', '|---|---|---|---|');
    }
    const shown = s.default === undefined ? '' : `\`${s.default}\``;
    out.push(`| \`--${s.flag}\` | \`${s.env}\` | ${shown} | ${s.description.replace(/\|/g, '\\|')} |`);
  }
  return `${out.join('\n').trim()}\n`;
}
