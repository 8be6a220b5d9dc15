// The replication topology of a Database with more than one replica, pure: one primary and
// N−1 streaming replicas, as two StatefulSets. A StatefulSet's pods share one template, and a
// Service selects by equal labels only, so "the replicas but not ordinal 0" is no selector; two
// templates are: `<name>` (always 1 pod, the primary, `role: primary`) and `<name>-replica`
// (N−1 pods, `role: replica`). `<name>` then reaches the primary and `<name>-ro` the replicas with
// plain label selectors that hold without the operator running, and scaling the Database scales
// only the replicas' StatefulSet: the primary is never the pod a scale-down removes.
//
// Each engine's mechanics (settings, the scripts, readiness that means "streaming") are in
// database-replication-postgresql.ts and database-replication-mysql.ts; this file names things and
// puts the scripts in the ConfigMap the pods mount.
import type { k8s } from 'cdk8s-plus-33';
import type { DatabaseEngine } from './api-types.js';
import { stableHash } from './stable-hash.js';

/** Which server of a database a pod is; `<name>` selects `primary`, `<name>-ro` selects `replica`. */
export const databaseRoleLabel = 'mycompany.com/database-role';

export type DatabaseRole = 'primary' | 'replica';

/** Where the replication ConfigMap is mounted in every container that needs it. */
export const replicationConfigPath = '/etc/preview-replication';

/** Keys of the replication credentials in the Database's create-once credentials Secret. */
export const replicationSecretKeys = { username: 'replication-username', password: 'replication-password' } as const;

/** The user replicas authenticate as (its password is random, in the Secret). */
export const replicationUsername = 'replicator';

/**
 * The longest StatefulSet name that works: its pods carry `controller-revision-hash:
 * <name>-<up to 10 characters>`, a label value of at most 63 characters.
 */
const maxStatefulSetName = 52;

/** Names of the objects replication adds to a database `name`. */
export function replicationObjectNames(name: string) {
  const replicaStatefulSet = `${name}-replica`;
  return {
    /** The StatefulSet of the replicas; the primary's is `<name>`. Bounded, so a name the CRD admits always fits. */
    replicaStatefulSet:
      replicaStatefulSet.length <= maxStatefulSetName
        ? replicaStatefulSet
        : `${name.slice(0, maxStatefulSetName - '-replica'.length - 7)}-${stableHash(name).slice(-6)}-replica`,
    /** The read-only Service: the replicas that are streaming (ready). */
    readOnlyService: `${name}-ro`,
    /** The settings and scripts the pods mount at `replicationConfigPath`. */
    configMap: `${name}-replication`,
  } as const;
}

/** The pod name of a database's primary: ordinal 0 of the StatefulSet `<name>`. */
export function primaryPodName(name: string): string {
  return `${name}-0`;
}

/** How replicas reach the primary: its stable name under the headless Service, in the same namespace. */
export function primaryHost(name: string, headlessService: string): string {
  return `${primaryPodName(name)}.${headlessService}`;
}

/** What one role's server container gets from replication, on top of the engine's own settings. */
export interface ReplicationRole {
  /** Server arguments appended to the engine's. */
  readonly args: readonly string[];
  /** Environment appended to the engine's. */
  readonly env: readonly k8s.EnvVar[];
  /** Whether the container keeps the application's credentials in its environment (a MySQL replica gets them by replication). */
  readonly applicationCredentials: boolean;
  /** ConfigMap keys the image's entrypoint runs once, when it initialises an empty data directory (`/docker-entrypoint-initdb.d`). */
  readonly initdbScripts: readonly string[];
  /** A command run in an init container of the same image before the server (a replica's base backup). */
  readonly initCommand?: readonly string[];
  /** The readiness command, when the role's differs from the engine's ("streaming from the primary" for a replica). */
  readonly readinessCommand?: readonly string[];
}

/** An engine's replication: the ConfigMap's files and what each role runs. */
export interface EngineReplication {
  readonly files: Readonly<Record<string, string>>;
  readonly primary: ReplicationRole;
  readonly replica: ReplicationRole;
}

/** What the engines' replication is rendered from. */
export interface ReplicationInput {
  readonly engine: DatabaseEngine;
  /** spec.version: the engine's settings differ by major version. */
  readonly version: string;
  /** The Database's credentials Secret. */
  readonly credentialsSecret: string;
  /** The primary's host name, as replicas resolve it. */
  readonly primaryHost: string;
  readonly port: number;
}

/** The environment that replication scripts read, common to the engines. */
export function replicationEnv(input: ReplicationInput, role: DatabaseRole): k8s.EnvVar[] {
  // Optional: a Secret created before replication existed has no such keys; the scripts then
  // fall back to the engine's administrator (every key of the Secret is create-once).
  const fromSecret = (key: string): k8s.EnvVarSource => ({ secretKeyRef: { name: input.credentialsSecret, key, optional: true } });
  const env: k8s.EnvVar[] = [
    { name: 'REPLICATION_USER', valueFrom: fromSecret(replicationSecretKeys.username) },
    { name: 'REPLICATION_PASSWORD', valueFrom: fromSecret(replicationSecretKeys.password) },
  ];
  if (role === 'replica') {
    env.push({ name: 'PRIMARY_HOST', value: input.primaryHost }, { name: 'PRIMARY_PORT', value: String(input.port) });
  }
  return env;
}

/** The major version of spec.version ("16" → 16, "8.4" → 8). */
export function majorVersion(version: string): number {
  return Number.parseInt(version, 10);
}
