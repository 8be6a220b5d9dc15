// How a preview's host gets its certificate. Per preview (the default), a cert-manager
// Certificate for exactly the host. Or one wildcard certificate for `*.<domain>` shared by every
// preview — for public CAs' rate limits (Let's Encrypt: 50 certificates per registered domain per
// week) and to keep every preview host out of Certificate Transparency logs: its Secret copied
// into each preview namespace by the operator (`wildcard`), or served by the ingress controller
// as its default certificate, with no copy and no key in any preview namespace (`ingress-default`).
// A host is one label under the domain (preview-hostname.ts), which is what `*.<domain>` covers.

export const previewTlsModes = ['per-preview', 'wildcard', 'ingress-default'] as const;
export type PreviewTlsMode = (typeof previewTlsModes)[number];

/**
 * The operator's copy of the wildcard certificate's Secret in a preview namespace (`wildcard`
 * mode). Reserved: a rendering may not write a Secret of this name, nor mount it into a pod.
 */
export const wildcardTlsSecretName = 'preview-wildcard-tls';
