import { Chart } from 'cdk8s';
import type { Construct } from 'constructs';
import { Algorithm } from './algorithm.js';
import { Certificate, type CertificateIssuer } from './certificate.js';
import { Database } from './database.js';
import type { Manifest } from './kube-object.js';
import { ownershipAnnotationKeys, ownershipAnnotations, ownershipLabels, type PreviewIdentity } from './ownership.js';
import type { PreviewConfig } from './preview-config.js';
import { wildcardTlsSecretName, type PreviewTlsMode } from './preview-tls.js';
import { PreviewIngress, type RouteBackend, type Routable } from './preview-ingress.js';
import {
  PreviewNamespace,
  type DnsPeer,
  type IngressControllerPeer,
  type PodSecurityLevel,
  type PreviewQuota,
} from './preview-namespace.js';

/** What `.preview/main.ts` receives besides the chart. */
export interface PreviewContext {
  readonly identity: PreviewIdentity;
  readonly config: PreviewConfig;
}

/**
 * The contract of a repository's `.preview/main.ts`: its default export, called with the
 * chart already holding everything `.preview/preview.yaml` declares.
 */
export type PreviewMain = (chart: PreviewEnvironmentChart, context: PreviewContext) => void;

/** Values that take precedence over the configuration (PreviewEnvironment spec.overrides). */
export interface PreviewOverrides {
  /** Image per algorithm name. @default - none */
  readonly images?: Readonly<Record<string, string>>;
  /** Environment variables for every algorithm, winning over the configuration's. @default - none */
  readonly env?: Readonly<Record<string, string>>;
}

export interface PreviewTlsOptions {
  /**
   * The cert-manager issuer of the per-preview Certificate.
   * @default { name: 'preview-issuer', kind: 'ClusterIssuer' }
   */
  readonly issuer?: CertificateIssuer;
  /**
   * Where the host's certificate comes from (preview-tls.ts): a Certificate of its own
   * (`per-preview`), the operator's copy of a wildcard certificate's Secret (`wildcard`, Secret
   * `preview-wildcard-tls`), or the ingress controller's default certificate (`ingress-default`).
   * The two wildcard modes render no Certificate.
   * @default 'per-preview'
   */
  readonly mode?: PreviewTlsMode;
}

export interface PreviewEnvironmentChartProps {
  readonly config: PreviewConfig;
  readonly identity: PreviewIdentity;
  /** @default - none */
  readonly overrides?: PreviewOverrides;
  /**
   * IngressClass of the preview's Ingress.
   * @default 'nginx'
   */
  readonly ingressClassName?: string;
  /**
   * TLS for the host through a cert-manager Certificate; `false` serves plain HTTP and renders
   * no Certificate (for clusters without cert-manager).
   * @default { issuer: { name: 'preview-issuer', kind: 'ClusterIssuer' } }
   */
  readonly tls?: PreviewTlsOptions | false;
  /**
   * Pod Security Standard enforced in the namespace.
   * @default 'restricted'
   */
  readonly podSecurity?: PodSecurityLevel;
  /** @default the ingress-nginx namespace */
  readonly ingressController?: IngressControllerPeer;
  /** @default kube-dns in kube-system */
  readonly dns?: DnsPeer;
}

/**
 * Everything one preview environment runs, from its configuration and identity: the
 * namespace (Pod Security, quota, defaults, isolation), an Algorithm per configured algorithm
 * (with its env ConfigMap), a Database per configured database, and, once anything is routed,
 * an Ingress for the host with its Certificate. Every object carries the ownership labels.
 * Deterministic: the same props give byte-identical manifests.
 */
export class PreviewEnvironmentChart extends Chart {
  public readonly identity: PreviewIdentity;
  public readonly config: PreviewConfig;
  public readonly previewNamespace: PreviewNamespace;
  /** By configured name. */
  public readonly algorithms: ReadonlyMap<string, Algorithm>;
  /** By configured name. */
  public readonly databases: ReadonlyMap<string, Database>;
  private readonly props: PreviewEnvironmentChartProps;
  private ingressConstruct?: PreviewIngress;
  private certificateConstruct?: Certificate;

  constructor(scope: Construct, id: string, props: PreviewEnvironmentChartProps) {
    const { identity, config } = props;
    super(scope, id, { namespace: identity.namespace, labels: ownershipLabels(identity), disableResourceNameHashes: true });
    this.props = props;
    this.identity = identity;
    this.config = config;

    this.previewNamespace = new PreviewNamespace(this, 'namespace', {
      name: identity.namespace,
      podSecurity: props.podSecurity,
      quota: quotaOf(config),
      ingressController: props.ingressController,
      dns: props.dns,
      annotations: { [ownershipAnnotationKeys.sha]: identity.sha },
    });

    const algorithms = new Map<string, Algorithm>();
    for (const algorithm of config.algorithms ?? []) {
      algorithms.set(
        algorithm.name,
        new Algorithm(this, `algorithm-${algorithm.name}`, {
          name: algorithm.name,
          image: props.overrides?.images?.[algorithm.name] ?? algorithm.image,
          replicas: algorithm.replicas,
          resources: algorithm.resources,
          scaling: algorithm.scaling,
          lifecycle: algorithm.lifecycle,
          env: { ...config.env, ...algorithm.env, ...props.overrides?.env },
        }),
      );
    }
    this.algorithms = algorithms;

    const databases = new Map<string, Database>();
    for (const database of config.databases ?? []) {
      databases.set(
        database.name,
        new Database(this, `database-${database.name}`, {
          name: database.name,
          engine: database.engine,
          version: database.version,
          storage: database.storage,
          replicas: database.replicas,
        }),
      );
    }
    this.databases = databases;

    for (const algorithm of config.algorithms ?? []) {
      if (algorithm.expose === false) continue;
      this.addRoute(algorithm.path ?? '/', algorithms.get(algorithm.name)!);
    }
  }

  public get context(): PreviewContext {
    return { identity: this.identity, config: this.config };
  }

  /** The Ingress, once something is routed. */
  public get ingress(): PreviewIngress | undefined {
    return this.ingressConstruct;
  }

  /** The host's Certificate, once something is routed (per-preview TLS only). */
  public get certificate(): Certificate | undefined {
    return this.certificateConstruct;
  }

  /** The preview's URL. */
  public get url(): string {
    return `${this.props.tls === false ? 'http' : 'https'}://${this.identity.host}`;
  }

  /** Routes a path prefix of the host to an algorithm (or any Service), creating the Ingress on first use. */
  public addRoute(path: string, target: RouteBackend | Routable): void {
    if (!this.ingressConstruct) {
      const tls = this.props.tls === false ? undefined : (this.props.tls ?? {});
      const mode = tls && (tls.mode ?? 'per-preview');
      if (mode === 'per-preview') {
        this.certificateConstruct = new Certificate(this, 'certificate', {
          name: 'preview-tls',
          secretName: 'preview-tls',
          dnsNames: [this.identity.host],
          issuer: tls?.issuer ?? { name: 'preview-issuer', kind: 'ClusterIssuer' },
        });
      }
      this.ingressConstruct = new PreviewIngress(this, 'ingress', {
        name: 'preview',
        host: this.identity.host,
        ingressClassName: this.props.ingressClassName,
        tlsSecretName: mode === 'wildcard' ? wildcardTlsSecretName : this.certificateConstruct?.secretName,
        defaultCertificate: mode === 'ingress-default',
      });
    }
    this.ingressConstruct.addRoute(path, target);
  }

  /**
   * The manifests, each stamped with the ownership labels and annotations (whatever a
   * repository's main.ts set), so that prune and `kubectl get -l` see all of them.
   */
  public override toJson(): Manifest[] {
    const labels = ownershipLabels(this.identity);
    const annotations = ownershipAnnotations(this.identity);
    return (super.toJson() as Manifest[]).map((object) => ({
      ...object,
      metadata: {
        ...object.metadata,
        labels: { ...object.metadata.labels, ...labels },
        annotations: { ...object.metadata.annotations, ...annotations },
      },
    }));
  }
}

function quotaOf(config: PreviewConfig): PreviewQuota {
  const resources = config.resources ?? {};
  let gpus: Record<string, number> | undefined;
  if (resources.gpu !== undefined) {
    gpus = {};
    const names = new Set((config.algorithms ?? []).map((a) => a.resources?.gpu ?? 'nvidia.com/gpu'));
    for (const name of names.size > 0 ? [...names].sort() : ['nvidia.com/gpu']) gpus[name] = resources.gpu;
  }
  return { cpu: resources.cpu, memory: resources.memory, storage: resources.storage, pods: resources.pods, gpus };
}
