// Throwaway certificates for tests of TLS, made with the openssl command: P-256 keys, valid two
// days, with the X.509v3 extensions given (a CA's constraints, a server's names, a client's usage).
import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';

export interface TestCertificate {
  cert: string;
  key: string;
  certFile: string;
  keyFile: string;
}

/** A new key in `keyFile`, and a certificate request (`-x509`: a self-signed certificate) in `outFile`. */
function newKey(keyFile: string, outFile: string, cn: string, selfSigned: string[]): void {
  const keyArgs = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-keyout', keyFile];
  execFileSync('openssl', ['req', ...selfSigned, ...keyArgs, '-out', outFile, '-subj', `/CN=${cn}`], { stdio: 'pipe' });
}

function read(certFile: string, keyFile: string): TestCertificate {
  return { cert: readFileSync(certFile, 'utf8'), key: readFileSync(keyFile, 'utf8'), certFile, keyFile };
}

/** `<name>.crt` and `<name>.key` in `dir`: self-signed for CN `cn`, each of `extensions` added. */
export function selfSigned(dir: string, name: string, cn: string, extensions: string[]): TestCertificate {
  const certFile = path.join(dir, `${name}.crt`);
  const keyFile = path.join(dir, `${name}.key`);
  newKey(keyFile, certFile, cn, ['-x509', '-days', '2', ...extensions.flatMap((e) => ['-addext', e])]);
  return read(certFile, keyFile);
}

/** `<name>.crt` and `<name>.key` in `dir`: signed by `ca` for CN `cn`, with `extensions`. */
export function issuedBy(ca: TestCertificate, dir: string, name: string, cn: string, extensions: string[]): TestCertificate {
  const [certFile, keyFile, csrFile, extFile] = ['crt', 'key', 'csr', 'ext'].map((ext) => path.join(dir, `${name}.${ext}`));
  writeFileSync(extFile!, extensions.join('\n') + '\n');
  newKey(keyFile!, csrFile!, cn, []);
  const signing = ['-CA', ca.certFile, '-CAkey', ca.keyFile, '-CAcreateserial', '-days', '2', '-extfile', extFile!];
  execFileSync('openssl', ['x509', '-req', '-in', csrFile!, ...signing, '-out', certFile!], { stdio: 'pipe' });
  return read(certFile!, keyFile!);
}
