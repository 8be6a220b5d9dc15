// The repository configuration, `.preview/preview.yaml`: its TypeScript type and the JSON
// Schema (draft-07, which ajv and editors understand) it is validated against.
// Documented in docs/repository-config.md; keep the three in step.

/** `.preview/preview.yaml`. */
export interface PreviewConfig {
  /**
   * Version of this format.
   * @default 1
   */
  readonly version?: 1;
  /**
   * First part of the environment's host name: `<hostPrefix>-pr-<number>.<preview domain>`.
   * @default the repository name
   */
  readonly hostPrefix?: string;
  /**
   * How long the environment lives after its last deployment, e.g. `72h`.
   * @default the operator's configured TTL
   */
  readonly ttl?: string;
  /**
   * Environment variables for every algorithm (an algorithm's own `env` wins on a clash).
   * @default - none
   */
  readonly env?: Readonly<Record<string, string>>;
  /**
   * The environment's budget, enforced by a ResourceQuota on its namespace.
   * @default see PreviewResourcesConfig
   */
  readonly resources?: PreviewResourcesConfig;
  /** @default - none */
  readonly algorithms?: readonly AlgorithmConfig[];
  /** @default - none */
  readonly databases?: readonly DatabaseConfig[];
}

/** Totals for the whole environment (all pods and claims of its namespace). */
export interface PreviewResourcesConfig {
  /** Sum of CPU limits. @default '8' */
  readonly cpu?: string;
  /** Sum of memory limits. @default '16Gi' */
  readonly memory?: string;
  /** Sum of volume claim sizes. @default '100Gi' */
  readonly storage?: string;
  /** GPUs (of every GPU resource the algorithms name). @default - unlimited */
  readonly gpu?: number;
  /** Number of pods. @default 50 */
  readonly pods?: number;
}

/** One Algorithm (ai.alien6.io/v1) of the environment. */
export interface AlgorithmConfig {
  /** Name of the Algorithm and of its Service. */
  readonly name: string;
  /** Container image, e.g. registry.alien6.io/algo/reco:2.1.4. */
  readonly image: string;
  /** @default 1 */
  readonly replicas?: number;
  readonly resources?: {
    /** @default 'nvidia.com/gpu' */
    readonly gpu?: string;
    /** @default 0 */
    readonly gpuCount?: number;
  };
  readonly scaling?: {
    /** @default 1 */
    readonly minReplicas?: number;
    readonly maxReplicas: number;
    readonly targetLatencyMs?: number;
  };
  readonly lifecycle?: {
    /** @default 0 */
    readonly canaryWeight?: number;
    /** @default 0.99 */
    readonly successThreshold?: number;
    /** @default true */
    readonly rollbackOnDrift?: boolean;
  };
  /** Environment variables of this algorithm. @default - none */
  readonly env?: Readonly<Record<string, string>>;
  /** Serve this algorithm on the environment's host. @default true */
  readonly expose?: boolean;
  /** URL path prefix routed to this algorithm. @default '/' */
  readonly path?: string;
}

/** One Database (mycompany.com/v1) of the environment. */
export interface DatabaseConfig {
  readonly name: string;
  readonly engine: 'postgresql' | 'mysql';
  /** Engine version (the official image's tag), e.g. "16". */
  readonly version: string;
  /** Volume size per replica, e.g. 10Gi. */
  readonly storage: string;
  /** @default 1 */
  readonly replicas?: number;
}

// Names become object names with suffixes (`-canary`, `-headless`, StatefulSet pod and
// revision names), and Service names must start with a letter: keep them short DNS labels.
const objectName = {
  type: 'string',
  pattern: '^[a-z]([-a-z0-9]*[a-z0-9])?$',
  maxLength: 40,
  description: 'lower-case letters, digits and "-", starting with a letter, at most 40 characters',
} as const;
const quantity = {
  type: 'string',
  pattern: '^[+]?[0-9]+(\\.[0-9]+)?(m|k|Ki|M|Mi|G|Gi|T|Ti|P|Pi|E|Ei)?$',
  maxLength: 32,
  description: 'a Kubernetes quantity such as 500m, 2, 512Mi or 10Gi',
} as const;
const envMap = {
  type: 'object',
  propertyNames: {
    pattern: '^[A-Za-z_][A-Za-z0-9_]*$',
    maxLength: 128,
    description: 'an environment variable name: letters, digits and "_", not starting with a digit',
  },
  additionalProperties: { type: 'string', maxLength: 32768 },
} as const;

/** JSON Schema of `.preview/preview.yaml` (the same rules as the CRDs, checked before anything is applied). */
export const previewConfigSchema = {
  $schema: 'http://json-schema.org/draft-07/schema#',
  $id: 'https://preview.alien6.io/schemas/preview-config.json',
  title: 'preview-operator repository configuration (.preview/preview.yaml)',
  type: 'object',
  additionalProperties: false,
  properties: {
    version: { type: 'integer', const: 1, description: 'the version of this format' },
    hostPrefix: {
      type: 'string',
      pattern: '^[a-z0-9]([-a-z0-9]*[a-z0-9])?$',
      maxLength: 40,
      description: 'a DNS label: lower-case letters, digits and "-", at most 40 characters',
    },
    ttl: {
      type: 'string',
      pattern: '^([0-9]+(\\.[0-9]+)?(ns|us|ms|s|m|h))+$',
      maxLength: 32,
      description: 'a duration such as 72h, 90m or 1h30m',
    },
    env: envMap,
    resources: {
      type: 'object',
      additionalProperties: false,
      properties: {
        cpu: quantity,
        memory: quantity,
        storage: quantity,
        gpu: { type: 'integer', minimum: 0, maximum: 1024 },
        pods: { type: 'integer', minimum: 1, maximum: 1000 },
      },
    },
    algorithms: {
      type: 'array',
      maxItems: 20,
      items: {
        type: 'object',
        additionalProperties: false,
        required: ['name', 'image'],
        properties: {
          name: objectName,
          image: { type: 'string', pattern: '^\\S+$', minLength: 1, maxLength: 512, description: 'an image reference without spaces' },
          replicas: { type: 'integer', minimum: 0, maximum: 1000 },
          resources: {
            type: 'object',
            additionalProperties: false,
            properties: {
              gpu: {
                type: 'string',
                pattern: '^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*)/[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$',
                maxLength: 253,
                description: 'an extended resource name such as nvidia.com/gpu',
              },
              gpuCount: { type: 'integer', minimum: 0, maximum: 16 },
            },
          },
          scaling: {
            type: 'object',
            additionalProperties: false,
            required: ['maxReplicas'],
            properties: {
              minReplicas: { type: 'integer', minimum: 1, maximum: 1000 },
              maxReplicas: { type: 'integer', minimum: 1, maximum: 1000 },
              targetLatencyMs: { type: 'integer', minimum: 1, maximum: 600000 },
            },
          },
          lifecycle: {
            type: 'object',
            additionalProperties: false,
            properties: {
              canaryWeight: { type: 'integer', minimum: 0, maximum: 100 },
              successThreshold: { type: 'number', minimum: 0, maximum: 1 },
              rollbackOnDrift: { type: 'boolean' },
            },
          },
          env: envMap,
          expose: { type: 'boolean' },
          path: {
            type: 'string',
            pattern: "^/[A-Za-z0-9._~!$&'()*+,;=:@%/-]*$",
            maxLength: 256,
            description: 'a URL path starting with /',
          },
        },
      },
    },
    databases: {
      type: 'array',
      maxItems: 10,
      items: {
        type: 'object',
        additionalProperties: false,
        required: ['name', 'engine', 'version', 'storage'],
        properties: {
          name: objectName,
          engine: { type: 'string', enum: ['postgresql', 'mysql'] },
          version: {
            type: 'string',
            pattern: '^[0-9]+(\\.[0-9]+){0,2}$',
            maxLength: 32,
            description: 'a version such as "16" or "8.4" (quoted, so YAML keeps it a string)',
          },
          storage: quantity,
          replicas: { type: 'integer', minimum: 1, maximum: 5 },
        },
      },
    },
  },
} as const;
