// Exact canary weights through the Gateway API: one Service per track and an HTTPRoute that
// splits the algorithm's traffic between them. Without a parentRef configured, the route
// attaches to the algorithm's own Service (GAMMA, the Gateway API's mesh binding), so a mesh
// that implements it splits in-cluster traffic to `<name>` by the route's weights.
import {
  algorithmLabel,
  algorithmObjectNames,
  algorithmServicePort,
  algorithmTrackLabel,
  type AlgorithmTrack,
} from '../../constructs/index.js';
import type { KubeObject, OwnerReference } from '../kube/index.js';

export const httpRouteKind = { apiVersion: 'gateway.networking.k8s.io/v1', kind: 'HTTPRoute' } as const;

/** A Gateway API parentRef (a Gateway, or a Service for mesh routing). */
export interface RouteParentRef {
  group?: string;
  kind?: string;
  name: string;
  namespace?: string;
  sectionName?: string;
  port?: number;
}

export function trackServiceName(name: string, track: AlgorithmTrack): string {
  return `${name}-${track}`;
}

export interface TrafficRouteInput {
  name: string;
  namespace: string;
  /** The canary's share in percent; 0 sends everything to the stable track. */
  canaryWeight: number;
  /** Where the route attaches (default: the algorithm's Service, GAMMA style). */
  parentRefs?: readonly RouteParentRef[];
  ownerReferences: readonly OwnerReference[];
}

/** The two track Services and the HTTPRoute carrying `canaryWeight` exactly. */
export function renderTrafficRoute(input: TrafficRouteInput): KubeObject[] {
  const { name, namespace } = input;
  const labels = {
    'app.kubernetes.io/name': name,
    'app.kubernetes.io/component': 'algorithm',
    'app.kubernetes.io/managed-by': 'preview-operator',
    [algorithmLabel]: name,
  };
  const metadata = (objectName: string) => ({ name: objectName, namespace, labels, ownerReferences: [...input.ownerReferences] });
  const trackService = (track: AlgorithmTrack): KubeObject => ({
    apiVersion: 'v1',
    kind: 'Service',
    metadata: metadata(trackServiceName(name, track)),
    spec: {
      type: 'ClusterIP',
      selector: { [algorithmLabel]: name, [algorithmTrackLabel]: track },
      ports: [{ name: 'http', port: algorithmServicePort, targetPort: 'http', protocol: 'TCP' }],
    },
  });
  const weight = Math.min(100, Math.max(0, Math.round(input.canaryWeight)));
  const parentRefs = input.parentRefs?.length
    ? input.parentRefs.map((p) => ({ ...p }))
    : [{ group: '', kind: 'Service', name: algorithmObjectNames(name).service, port: algorithmServicePort }];
  const route: KubeObject = {
    ...httpRouteKind,
    metadata: metadata(name),
    spec: {
      parentRefs,
      rules: [
        {
          backendRefs: [
            { group: '', kind: 'Service', name: trackServiceName(name, 'stable'), port: algorithmServicePort, weight: 100 - weight },
            { group: '', kind: 'Service', name: trackServiceName(name, 'canary'), port: algorithmServicePort, weight },
          ],
        },
      ],
    },
  };
  return [trackService('stable'), trackService('canary'), route];
}
