// cert-manager-local: cert-manager's own controllers, built from the cert-manager Go module in
// test/cert-manager/ (a module of its own: cert-manager pins k8s.io v0.36, kube-local v0.37),
// cached like kube-local. Its real CRDs come from the same module version.
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { ensureGoBinary, type BuildOptions, type GoBinary } from './go-binary.js';

const projectRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
export const certManagerModuleDir = path.join(projectRoot, 'test', 'cert-manager');
const certManagerModule = 'github.com/cert-manager/cert-manager';
const goEnv = { ...process.env, GOTOOLCHAIN: 'local', GOFLAGS: '-mod=readonly' };

/** The cert-manager version go.mod requires (the version stamped into the binary). */
export function certManagerVersion(): string {
  const goMod = readFileSync(path.join(certManagerModuleDir, 'go.mod'), 'utf8');
  const version = new RegExp(`^\\s*(?:require\\s+)?${certManagerModule.replace(/\./g, '\\.')}\\s+(v\\S+)`, 'm').exec(goMod)?.[1];
  if (!version) throw new Error(`cert-manager-local: ${certManagerModule} is not required in ${certManagerModuleDir}/go.mod`);
  return version;
}

function certManagerBinary(): GoBinary {
  const version = certManagerVersion();
  return {
    name: 'cert-manager-local',
    moduleDir: certManagerModuleDir,
    cacheDir: process.env.CERT_MANAGER_LOCAL_CACHE ?? path.join(projectRoot, '.cache', 'cert-manager-local'),
    ldflags: `-s -w -X ${certManagerModule}/pkg/util.AppVersion=${version}`,
    stamp: version,
    announce: `building cert-manager ${version}'s controllers from Go modules (a cold build takes 3-5 minutes; later runs reuse it)`,
  };
}

/** Returns the path of the cert-manager-local binary, building it when its sources changed. */
export function ensureCertManagerBinary(options: BuildOptions = {}): Promise<string> {
  return ensureGoBinary(certManagerBinary(), options);
}

/** cert-manager's own CRD files (deploy/crds/) of the module version the binary is built from. */
export async function certManagerCrdFiles(): Promise<string[]> {
  // `go mod download` answers from the module cache, fetching the module only if it is not there.
  const download = ['mod', 'download', '-json', certManagerModule];
  const { stdout } = await promisify(execFile)('go', download, { cwd: certManagerModuleDir, env: goEnv });
  const dir = (JSON.parse(stdout) as { Dir?: string }).Dir;
  if (!dir) throw new Error(`cert-manager-local: go mod download reported no folder for ${certManagerModule}`);
  return ['certificates', 'certificaterequests', 'issuers', 'clusterissuers'].map((plural) =>
    path.join(dir, 'deploy', 'crds', `cert-manager.io_${plural}.yaml`),
  );
}
