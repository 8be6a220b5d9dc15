// The Pod Security Standards (https://kubernetes.io/docs/concepts/security/pod-security-standards/,
// version "latest" as of Kubernetes 1.33) as a pure check of pod specs, so a rendering that the
// namespace's admission would refuse is rejected before anything is applied — admission on a
// Deployment only warns, and its pods would then fail one by one, long after the apply "worked".
// Each violation names the field, like the API server's own messages do.

export type PodSecurityLevel = 'privileged' | 'baseline' | 'restricted';

export interface PodSecurityViolation {
  /** The check, as the standard names it, e.g. `privileged`, `runAsNonRoot`, `capabilities`. */
  check: string;
  /** Where, relative to the pod spec, e.g. `containers[0].securityContext.privileged`. */
  path: string;
  message: string;
}

type Json = Record<string, unknown>;

const baselineCapabilities = new Set([
  'AUDIT_WRITE',
  'CHOWN',
  'DAC_OVERRIDE',
  'FOWNER',
  'FSETID',
  'KILL',
  'MKNOD',
  'NET_BIND_SERVICE',
  'SETFCAP',
  'SETGID',
  'SETPCAP',
  'SETUID',
  'SYS_CHROOT',
]);
const safeSysctls = new Set([
  'kernel.shm_rmid_forced',
  'net.ipv4.ip_local_port_range',
  'net.ipv4.ip_unprivileged_port_start',
  'net.ipv4.tcp_syncookies',
  'net.ipv4.ping_group_range',
  'net.ipv4.ip_local_reserved_ports',
  'net.ipv4.tcp_keepalive_time',
  'net.ipv4.tcp_fin_timeout',
  'net.ipv4.tcp_keepalive_intvl',
  'net.ipv4.tcp_keepalive_probes',
]);
const baselineSeLinuxTypes = new Set(['', 'container_t', 'container_init_t', 'container_kvm_t', 'container_engine_t']);
const restrictedVolumeTypes = new Set([
  'configMap',
  'csi',
  'downwardAPI',
  'emptyDir',
  'ephemeral',
  'persistentVolumeClaim',
  'projected',
  'secret',
]);
const appArmorAnnotationPrefix = 'container.apparmor.security.beta.kubernetes.io/';

function object(value: unknown): Json | undefined {
  return value && typeof value === 'object' && !Array.isArray(value) ? (value as Json) : undefined;
}

function list(value: unknown): Json[] {
  return Array.isArray(value) ? value.map((v) => object(v) ?? {}) : [];
}

interface ContainerAt {
  container: Json;
  path: string;
}

function containersOf(spec: Json): ContainerAt[] {
  const out: ContainerAt[] = [];
  for (const field of ['initContainers', 'containers', 'ephemeralContainers']) {
    list(spec[field]).forEach((container, i) => out.push({ container, path: `${field}[${i}]` }));
  }
  return out;
}

/**
 * The violations of `level` by a pod (its spec and its metadata's annotations). `privileged`
 * allows everything; `restricted` includes every `baseline` check.
 */
export function checkPodSecurity(
  spec: Json,
  annotations: Readonly<Record<string, string>> | undefined,
  level: PodSecurityLevel,
): PodSecurityViolation[] {
  if (level === 'privileged') return [];
  const violations = checkBaseline(spec, annotations ?? {});
  if (level === 'restricted') violations.push(...checkRestricted(spec));
  return violations;
}

type Add = (check: string, path: string, message: string) => void;

function checkBaseline(spec: Json, annotations: Record<string, string>): PodSecurityViolation[] {
  const v: PodSecurityViolation[] = [];
  const add: Add = (check, path, message) => v.push({ check, path, message });
  const podContext = object(spec.securityContext) ?? {};

  for (const field of ['hostNetwork', 'hostPID', 'hostIPC'] as const) {
    if (spec[field] === true) add('hostNamespaces', field, `${field} must not be true`);
  }
  if (object(podContext.windowsOptions)?.hostProcess === true) {
    add('hostProcess', 'securityContext.windowsOptions.hostProcess', 'host processes are not allowed');
  }
  list(spec.volumes).forEach((volume, i) => {
    if (volume.hostPath !== undefined) {
      add('hostPathVolumes', `volumes[${i}].hostPath`, `volume "${String(volume.name)}" must not use hostPath`);
    }
  });
  checkSeLinux(podContext, 'securityContext', add);
  checkSeccompNotUnconfined(podContext, 'securityContext', add);
  checkAppArmorProfile(podContext, 'securityContext', add);
  list(podContext.sysctls).forEach((sysctl, i) => {
    if (!safeSysctls.has(String(sysctl.name))) {
      add('sysctls', `securityContext.sysctls[${i}].name`, `sysctl "${String(sysctl.name)}" is not in the safe set`);
    }
  });
  for (const [key, value] of Object.entries(annotations)) {
    if (key.startsWith(appArmorAnnotationPrefix) && value !== 'runtime/default' && !value.startsWith('localhost/')) {
      add(
        'appArmorProfile',
        `metadata.annotations[${key}]`,
        `AppArmor profile "${value}" is not allowed (runtime/default or localhost/* only)`,
      );
    }
  }

  for (const { container, path } of containersOf(spec)) checkBaselineContainer(container, path, add);
  return v;
}

function checkBaselineContainer(container: Json, path: string, add: Add): void {
  const name = String(container.name ?? path);
  const sc = object(container.securityContext) ?? {};
  const at = `${path}.securityContext`;
  if (sc.privileged === true) add('privileged', `${at}.privileged`, `container "${name}" must not be privileged`);
  if (object(sc.windowsOptions)?.hostProcess === true) {
    add('hostProcess', `${at}.windowsOptions.hostProcess`, `container "${name}" must not be a host process`);
  }
  const capabilitiesAdded = object(sc.capabilities)?.add;
  for (const capability of Array.isArray(capabilitiesAdded) ? capabilitiesAdded : []) {
    if (!baselineCapabilities.has(String(capability))) {
      add('capabilities', `${at}.capabilities.add`, `container "${name}" must not add capability ${String(capability)}`);
    }
  }
  list(container.ports).forEach((port, i) => {
    if (port.hostPort !== undefined && port.hostPort !== 0) {
      add('hostPorts', `${path}.ports[${i}].hostPort`, `container "${name}" must not use host port ${String(port.hostPort)}`);
    }
  });
  if (sc.procMount !== undefined && sc.procMount !== 'Default') {
    add('procMount', `${at}.procMount`, `container "${name}" must use the default /proc mount`);
  }
  checkSeLinux(sc, at, add);
  checkSeccompNotUnconfined(sc, at, add);
  checkAppArmorProfile(sc, at, add);
}

function checkSeLinux(sc: Json, at: string, add: Add): void {
  const options = object(sc.seLinuxOptions);
  if (!options) return;
  if (options.type !== undefined && !baselineSeLinuxTypes.has(String(options.type))) {
    add('seLinuxOptions', `${at}.seLinuxOptions.type`, `SELinux type "${String(options.type)}" is not allowed`);
  }
  if (options.user !== undefined && options.user !== '') {
    add('seLinuxOptions', `${at}.seLinuxOptions.user`, 'a custom SELinux user is not allowed');
  }
  if (options.role !== undefined && options.role !== '') {
    add('seLinuxOptions', `${at}.seLinuxOptions.role`, 'a custom SELinux role is not allowed');
  }
}

function checkSeccompNotUnconfined(sc: Json, at: string, add: Add): void {
  if (object(sc.seccompProfile)?.type === 'Unconfined') {
    add('seccompProfile', `${at}.seccompProfile.type`, 'seccomp profile Unconfined is not allowed');
  }
}

function checkAppArmorProfile(sc: Json, at: string, add: Add): void {
  const type = object(sc.appArmorProfile)?.type;
  if (type !== undefined && type !== 'RuntimeDefault' && type !== 'Localhost') {
    add('appArmorProfile', `${at}.appArmorProfile.type`, `AppArmor profile ${String(type)} is not allowed`);
  }
}

/** What the restricted checks of a container need to know about its pod. */
interface RestrictedPod {
  /** Windows pods are exempt from the Linux-only checks, as the standard says. */
  linux: boolean;
  podNonRoot: boolean;
  podSeccomp: unknown;
}

function checkRestricted(spec: Json): PodSecurityViolation[] {
  const v: PodSecurityViolation[] = [];
  const add: Add = (check, path, message) => v.push({ check, path, message });
  const podContext = object(spec.securityContext) ?? {};
  const pod: RestrictedPod = {
    linux: object(spec.os)?.name !== 'windows',
    podNonRoot: podContext.runAsNonRoot === true,
    podSeccomp: object(podContext.seccompProfile)?.type,
  };

  list(spec.volumes).forEach((volume, i) => {
    const type = Object.keys(volume).find((k) => k !== 'name');
    if (type !== undefined && !restrictedVolumeTypes.has(type)) {
      add('volumeTypes', `volumes[${i}].${type}`, `volume "${String(volume.name)}" uses type ${type}, which is not allowed`);
    }
  });
  if (podContext.runAsUser === 0) add('runAsUser', 'securityContext.runAsUser', 'pods must not run as user 0 (root)');
  if (podContext.runAsNonRoot === false) add('runAsNonRoot', 'securityContext.runAsNonRoot', 'runAsNonRoot must not be false');
  const { podSeccomp } = pod;
  if (pod.linux && podSeccomp !== undefined && podSeccomp !== 'RuntimeDefault' && podSeccomp !== 'Localhost') {
    add(
      'seccompProfile',
      'securityContext.seccompProfile.type',
      `seccomp profile ${String(podSeccomp)} is not allowed (RuntimeDefault or Localhost)`,
    );
  }
  for (const { container, path } of containersOf(spec)) checkRestrictedContainer(container, path, pod, add);
  return v;
}

function checkRestrictedContainer(container: Json, path: string, pod: RestrictedPod, add: Add): void {
  const name = String(container.name ?? path);
  const sc = object(container.securityContext) ?? {};
  const at = `${path}.securityContext`;
  if (pod.linux && sc.allowPrivilegeEscalation !== false) {
    add('allowPrivilegeEscalation', `${at}.allowPrivilegeEscalation`, `container "${name}" must set allowPrivilegeEscalation: false`);
  }
  if (sc.runAsNonRoot === false) {
    add('runAsNonRoot', `${at}.runAsNonRoot`, `container "${name}" must not set runAsNonRoot: false`);
  } else if (sc.runAsNonRoot !== true && !pod.podNonRoot) {
    add('runAsNonRoot', `${at}.runAsNonRoot`, `container "${name}" must set runAsNonRoot: true (or the pod must)`);
  }
  if (sc.runAsUser === 0) add('runAsUser', `${at}.runAsUser`, `container "${name}" must not run as user 0 (root)`);
  if (!pod.linux) return;
  checkRestrictedSeccomp(sc, at, name, pod.podSeccomp, add);
  checkRestrictedCapabilities(sc, at, name, add);
}

function checkRestrictedSeccomp(sc: Json, at: string, name: string, podSeccomp: unknown, add: Add): void {
  const seccomp = object(sc.seccompProfile)?.type;
  if (seccomp === undefined) {
    if (podSeccomp !== undefined) return;
    add(
      'seccompProfile',
      `${at}.seccompProfile.type`,
      `container "${name}" must set a seccomp profile of RuntimeDefault or Localhost (or the pod must)`,
    );
  } else if (seccomp !== 'RuntimeDefault' && seccomp !== 'Localhost') {
    add('seccompProfile', `${at}.seccompProfile.type`, `container "${name}": seccomp profile ${String(seccomp)} is not allowed`);
  }
}

function checkRestrictedCapabilities(sc: Json, at: string, name: string, add: Add): void {
  const capabilities = object(sc.capabilities) ?? {};
  const drop = Array.isArray(capabilities.drop) ? capabilities.drop.map(String) : [];
  if (!drop.includes('ALL')) add('capabilities', `${at}.capabilities.drop`, `container "${name}" must drop ALL capabilities`);
  const added = Array.isArray(capabilities.add) ? capabilities.add.map(String) : [];
  // Capabilities outside baseline's list were already reported by the baseline check.
  for (const capability of added) {
    if (capability !== 'NET_BIND_SERVICE' && baselineCapabilities.has(capability)) {
      add('capabilities', `${at}.capabilities.add`, `container "${name}" may add only NET_BIND_SERVICE, not ${capability}`);
    }
  }
}

/**
 * The pod template of a workload object (`spec` of a Pod, `spec.template.spec` of the
 * controllers, `spec.jobTemplate.spec.template.spec` of a CronJob), with its annotations and
 * the path to it; undefined for kinds that carry no pod.
 */
export function podTemplateOf(
  object_: { apiVersion: string; kind: string; metadata?: { annotations?: Record<string, string> } } & Json,
): { spec: Json; annotations: Record<string, string> | undefined; labels: Json | undefined; path: string } | undefined {
  const group = object_.apiVersion.includes('/') ? object_.apiVersion.slice(0, object_.apiVersion.indexOf('/')) : '';
  const template = (t: unknown, path: string) => {
    const tpl = object(t);
    const podSpec = object(tpl?.spec);
    if (!podSpec) return undefined;
    const metadata = object(tpl?.metadata);
    return {
      spec: podSpec,
      annotations: object(metadata?.annotations) as Record<string, string> | undefined,
      labels: object(metadata?.labels),
      path,
    };
  };
  // A PodTemplate has no spec of its own: its pod spec is under `template`.
  if (group === '' && object_.kind === 'PodTemplate') return template(object_.template, 'template.spec');
  const spec = object(object_.spec);
  if (!spec) return undefined;
  if (group === '' && object_.kind === 'Pod') {
    return { spec, annotations: object_.metadata?.annotations, labels: object(object(object_.metadata)?.labels), path: 'spec' };
  }
  if (group === '' && object_.kind === 'ReplicationController') return template(spec.template, 'spec.template.spec');
  if (group === 'apps' && ['Deployment', 'StatefulSet', 'DaemonSet', 'ReplicaSet'].includes(object_.kind)) {
    return template(spec.template, 'spec.template.spec');
  }
  if (group === 'batch' && object_.kind === 'Job') return template(spec.template, 'spec.template.spec');
  if (group === 'batch' && object_.kind === 'CronJob') {
    return template(object(object(spec.jobTemplate)?.spec)?.template, 'spec.jobTemplate.spec.template.spec');
  }
  return undefined;
}
