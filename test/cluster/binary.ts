import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { ensureGoBinary, goSourceHash, type BuildOptions, type GoBinary } from './go-binary.js';

export type { BuildOptions } from './go-binary.js';

/** Where the Go module of the control plane lives. */
export const clusterModuleDir = path.dirname(fileURLToPath(import.meta.url));
const projectRoot = path.resolve(clusterModuleDir, '..', '..');
const cacheDir = process.env.KUBE_LOCAL_CACHE ?? path.join(projectRoot, '.cache', 'kube-local');

export const kubernetesVersion = 'v1.37.2';

/** A hash of everything that decides the binary: go.mod, go.sum, the Go sources and the version stamp. */
export function sourceHash(): string {
  return goSourceHash(clusterModuleDir, kubernetesVersion);
}

function versionFlags(): string {
  const [major, minor] = kubernetesVersion.slice(1).split('.');
  const vars: string[] = [];
  for (const pkg of ['k8s.io/component-base/version', 'k8s.io/client-go/pkg/version']) {
    vars.push(`-X ${pkg}.gitVersion=${kubernetesVersion}`, `-X ${pkg}.gitMajor=${major}`, `-X ${pkg}.gitMinor=${minor}`);
    vars.push(`-X ${pkg}.gitTreeState=clean`);
  }
  return ['-s -w', ...vars].join(' ');
}

const kubeLocal: GoBinary = {
  name: 'kube-local',
  moduleDir: clusterModuleDir,
  cacheDir,
  ldflags: versionFlags(),
  stamp: kubernetesVersion,
  announce:
    `building the Kubernetes ${kubernetesVersion} control plane from Go modules ` +
    '(a cold build takes 15-30 minutes; later runs reuse it)',
};

/**
 * Returns the path of the control-plane binary, building it only when the sources
 * changed since the cached build. Concurrent callers wait for one build.
 */
export function ensureBinary(options: BuildOptions = {}): Promise<string> {
  return ensureGoBinary(kubeLocal, options);
}
