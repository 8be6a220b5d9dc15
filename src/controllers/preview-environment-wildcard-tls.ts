// The wildcard TLS modes (constructs/preview-tls.ts) in a reconcile: no Certificate per preview,
// one certificate for `*.<domain>` whose Secret (`tlsWildcardSecret`, e.g. issued by cert-manager
// in the operator's namespace) serves every host.
//
// `wildcard`: the Secret is copied into each preview namespace as `preview-wildcard-tls`, the
// name the preview's Ingress references, and kept in step — a renewal changes the source, its
// informer wakes every environment, and each copy is applied again: one write per namespace, no
// redeploy, no status write. The copy carries a label of its own, not the environment label, so
// prune never takes it; it goes with the namespace. In any other mode a copy left from an earlier
// `wildcard` run is deleted: the shared key stays in no namespace that does not need it.
// `ingress-default`: the ingress controller serves the Secret as its default certificate;
// nothing is copied, and the Secret itself is what readiness looks at.
//
// Readiness: the Secret the host is served from holds a certificate that covers the host and is
// valid now (wildcard-certificate.ts); only then is the URL reported, as https://.
import { ownershipLabelKeys, wildcardTlsSecretName, type PreviewTlsMode, type ResourceReadiness } from '../../constructs/index.js';
import {
  Applier,
  InvalidError,
  NotFoundError,
  type CacheReader,
  type KubeObject,
  type Logger,
  type ObjectClient,
  type ObjectRef,
} from '../kube/index.js';
import { certificateProblem, secretData, tlsData } from './wildcard-certificate.js';

export const secretKind = { apiVersion: 'v1', kind: 'Secret' } as const;
/** Marks the operator's copies (and selects them for their informer). */
export const wildcardCopyLabel = 'preview.alien6.io/wildcard-tls-copy';
/** On a copy: the Secret it was copied from, for whoever looks at it. */
export const copiedFromAnnotation = 'preview.alien6.io/copied-from';

export interface SecretRef {
  namespace: string;
  name: string;
}

/** The caches of the wildcard Secret (`source`, one object) and of the copies (labelled). */
export interface WildcardTlsInformers {
  source?: CacheReader;
  copies: CacheReader;
}

export interface WildcardTlsDependencies {
  client: ObjectClient;
  /** Without them (unit tests), the Secrets are read from the API server. */
  informers?: WildcardTlsInformers;
  mode: PreviewTlsMode;
  secret?: SecretRef;
  logger: Logger;
}

export class WildcardTls {
  private readonly applier: Applier;

  constructor(private readonly deps: WildcardTlsDependencies) {
    const copies = deps.informers?.copies;
    this.applier = new Applier(deps.client, {
      lookup: (ref) => copies?.lookup(`${ref.namespace}/${ref.name}`),
      seen: copies && (() => copies.lastResourceVersion?.()),
    });
    if (deps.mode !== 'per-preview' && !deps.secret) throw new Error(`TLS mode ${deps.mode} needs the wildcard certificate's Secret`);
  }

  /**
   * `wildcard`: the copy in `namespace` as the source holds it (while the source has no
   * certificate, whatever copy there is stays); returns the copy. Other modes: no copy.
   */
  async keepCopy(namespace: string): Promise<KubeObject | undefined> {
    if (this.deps.mode !== 'wildcard') return void (await this.removeCopy(namespace));
    const data = tlsData(secretData(await this.source()));
    if (!data) return this.copy(namespace);
    const copy = this.copyOf(namespace, data);
    try {
      return (await this.applier.apply([copy]))[0]!.object;
    } catch (err) {
      // Someone else's Secret of that name and another type (a type cannot change): replaced.
      if (!(err instanceof InvalidError)) throw err;
      await this.deps.client.delete(refOf(namespace));
      return (await this.applier.apply([copy]))[0]!.object;
    }
  }

  /**
   * The readiness of the Secret `host` is served from (undefined in `per-preview` mode); `copy`:
   * what `keepCopy` returned in this reconcile (undefined: it did not run, or there is none).
   */
  async readiness(host: string, now: Date, copy: KubeObject | undefined): Promise<ResourceReadiness | undefined> {
    const { mode, secret } = this.deps;
    if (mode === 'per-preview' || !secret) return undefined;
    const source = `${secret.namespace}/${secret.name}`;
    const base = { apiVersion: 'v1', kind: 'Secret' };
    if (mode === 'ingress-default') {
      const live = await this.source();
      const problem = live ? certificateProblem(secretData(live), host, now) : 'does not exist';
      const message = problem
        ? `the ingress controller's default certificate: ${problem}`
        : `the ingress controller's default certificate, covers ${host}`;
      return { ...base, name: source, ready: !problem, message };
    }
    const problem = copy ? certificateProblem(secretData(copy), host, now) : await this.missingCopy();
    return {
      ...base,
      name: wildcardTlsSecretName,
      ready: !problem,
      message: `copy of ${source}${problem ? `: ${problem}` : `, covers ${host}`}`,
    };
  }

  private async missingCopy(): Promise<string> {
    const source = await this.source();
    if (!source) return 'not copied: it does not exist (is its Certificate issued?)';
    return tlsData(secretData(source)) ? 'not copied yet' : 'not copied: it holds no certificate and key (tls.crt, tls.key)';
  }

  private copyOf(namespace: string, data: Readonly<Record<string, string>>): KubeObject {
    const { secret } = this.deps;
    return {
      ...secretKind,
      metadata: {
        name: wildcardTlsSecretName,
        namespace,
        labels: { [ownershipLabelKeys.managedBy]: 'preview-operator', [wildcardCopyLabel]: 'true' },
        annotations: { [copiedFromAnnotation]: `${secret!.namespace}/${secret!.name}` },
      },
      type: 'kubernetes.io/tls',
      data: { ...data },
    };
  }

  private async removeCopy(namespace: string): Promise<void> {
    const copy = this.deps.informers?.copies.get(`${namespace}/${wildcardTlsSecretName}`);
    if (!copy || copy.metadata.deletionTimestamp) return;
    await this.deps.client.delete(refOf(namespace)).catch((err) => (err instanceof NotFoundError ? undefined : Promise.reject(err)));
    this.deps.logger.info(
      { namespace, secret: wildcardTlsSecretName },
      "deleted the wildcard certificate's copy (TLS mode is not wildcard)",
    );
  }

  private async source(): Promise<KubeObject | undefined> {
    const { secret, informers } = this.deps;
    if (informers?.source) return informers.source.get(`${secret!.namespace}/${secret!.name}`);
    return this.get({ ...secretKind, namespace: secret!.namespace, name: secret!.name });
  }

  private async copy(namespace: string): Promise<KubeObject | undefined> {
    const known = this.applier.known(refOf(namespace));
    if (known !== undefined) return known === 'absent' ? undefined : known;
    return this.get(refOf(namespace));
  }

  private get(ref: ObjectRef): Promise<KubeObject | undefined> {
    return this.deps.client.get(ref).catch((err) => (err instanceof NotFoundError ? undefined : Promise.reject(err)));
  }
}

function refOf(namespace: string): ObjectRef {
  return { ...secretKind, namespace, name: wildcardTlsSecretName };
}
