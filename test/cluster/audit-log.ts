import { existsSync, readFileSync, statSync } from 'node:fs';

/** One line of the API server's JSON audit log (the fields tests look at). */
export interface AuditEvent {
  auditID: string;
  stage: string;
  verb: string;
  requestURI: string;
  user: { username: string; groups?: string[] };
  userAgent?: string;
  objectRef?: { resource?: string; namespace?: string; name?: string; apiGroup?: string; apiVersion?: string; subresource?: string };
  responseStatus?: { code?: number };
  requestReceivedTimestamp: string;
}

export interface AuditFilter {
  /** Only requests made by this user (e.g. `system:serviceaccount:ns:name`). */
  user?: string;
  /** Only requests on objects in this namespace, or the namespace object itself. */
  namespace?: string;
  /** Only requests on this resource (plural, e.g. `deployments`). */
  resource?: string;
  /** Only requests whose user agent starts with this. */
  userAgent?: string;
  /** Leave out dry-run requests (default true). */
  excludeDryRun?: boolean;
}

const writeVerbs = new Set(['create', 'update', 'patch', 'delete', 'deletecollection']);

/**
 * Reads the audit log the test control plane writes (the policy records every
 * write request once, at ResponseComplete). Positions are byte offsets, so a test
 * takes a mark, acts, and reads only what came after.
 */
export class AuditLog {
  constructor(readonly path: string) {}

  /** The current end of the log: pass it to `writes` to see only later requests. */
  mark(): number {
    return existsSync(this.path) ? statSync(this.path).size : 0;
  }

  events(since = 0): AuditEvent[] {
    if (!existsSync(this.path)) return [];
    const text = readFileSync(this.path).subarray(since).toString('utf8');
    const out: AuditEvent[] = [];
    for (const line of text.split('\n')) {
      if (!line.trim()) continue;
      try {
        out.push(JSON.parse(line) as AuditEvent);
      } catch {
        // A line being written right now; the next read sees it whole.
      }
    }
    return out;
  }

  /** Successful and failed write requests since a mark, filtered. */
  writes(since = 0, filter: AuditFilter = {}): AuditEvent[] {
    const excludeDryRun = filter.excludeDryRun ?? true;
    return this.events(since).filter((e) => {
      if (!writeVerbs.has(e.verb)) return false;
      if (excludeDryRun && /[?&]dryRun=/.test(e.requestURI)) return false;
      if (filter.user && e.user.username !== filter.user) return false;
      if (filter.resource && e.objectRef?.resource !== filter.resource) return false;
      if (filter.userAgent && !(e.userAgent ?? '').startsWith(filter.userAgent)) return false;
      if (filter.namespace) {
        const ref = e.objectRef ?? {};
        const isNamespaceItself = ref.resource === 'namespaces' && ref.name === filter.namespace;
        if (ref.namespace !== filter.namespace && !isNamespaceItself) return false;
      }
      return true;
    });
  }

  /**
   * Waits until the API server has flushed the lines for requests already answered.
   * It writes at ResponseComplete, just after the client saw the answer.
   */
  async settle(ms = 300): Promise<void> {
    let size = this.mark();
    for (;;) {
      await new Promise((r) => setTimeout(r, ms));
      const now = this.mark();
      if (now === size) return;
      size = now;
    }
  }
}

/** The audit policy: every write, once, with metadata only; nothing else. */
export const auditPolicyYaml = `apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: ["RequestReceived", "ResponseStarted", "Panic"]
rules:
  - level: Metadata
    verbs: ["create", "update", "patch", "delete", "deletecollection"]
  - level: None
`;
