// GitHub App credentials as GitHub issues and checks them: an RSA key pair per App (the
// private key in the PKCS#1 PEM GitHub lets you download) and RS256 JWTs verified the way
// GitHub does (issuer = App id, at most 10 minutes of validity).
import { createPublicKey, generateKeyPairSync, verify, type KeyObject } from 'node:crypto';

export function generateAppKeyPair(): { privateKeyPem: string; publicKey: KeyObject } {
  const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  return {
    privateKeyPem: privateKey.export({ type: 'pkcs1', format: 'pem' }).toString(),
    publicKey: createPublicKey(publicKey.export({ type: 'spki', format: 'pem' })),
  };
}

export interface JwtClaims {
  iss: string;
  iat: number;
  exp: number;
}

const decode = (part: string): unknown => JSON.parse(Buffer.from(part, 'base64url').toString('utf8'));

export function looksLikeJwt(token: string): boolean {
  return /^[\w-]+\.[\w-]+\.[\w-]+$/.test(token);
}

/** The unverified issuer, to find which App's key to check the signature with. */
export function jwtIssuer(token: string): string | undefined {
  try {
    const claims = decode(token.split('.')[1]!) as Partial<JwtClaims>;
    return claims.iss === undefined ? undefined : String(claims.iss);
  } catch {
    return undefined;
  }
}

/**
 * Verifies a GitHub App JWT; returns GitHub's error message when it would reject it.
 * `nowSeconds` is injectable so tests of the emulator itself can check expiry.
 */
export function verifyAppJwt(
  token: string,
  publicKey: KeyObject,
  appId: number,
  nowSeconds = Math.floor(Date.now() / 1000),
): string | undefined {
  const [header, payload, signature] = token.split('.');
  if (!header || !payload || !signature) return 'A JSON web token could not be decoded';
  let claims: Partial<JwtClaims>;
  try {
    const h = decode(header) as { alg?: string };
    if (h.alg !== 'RS256') return 'A JSON web token could not be decoded';
    claims = decode(payload) as Partial<JwtClaims>;
  } catch {
    return 'A JSON web token could not be decoded';
  }
  const valid = verify('RSA-SHA256', Buffer.from(`${header}.${payload}`), publicKey, Buffer.from(signature, 'base64url'));
  if (!valid) return 'A JSON web token could not be decoded';
  if (String(claims.iss) !== String(appId)) return "'Issuer' claim ('iss') must be an Integer";
  if (typeof claims.iat !== 'number')
    return "'Issued at' claim ('iat') must be an Integer representing the time that the assertion was issued.";
  if (typeof claims.exp !== 'number' || claims.exp <= nowSeconds) {
    return "'Expiration time' claim ('exp') must be a numeric value representing the future time at which the assertion expires.";
  }
  if (claims.iat > nowSeconds + 60)
    return "'Issued at' claim ('iat') must be an Integer representing the time that the assertion was issued.";
  if (claims.exp - claims.iat > 600 || claims.exp > nowSeconds + 600) return "'Expiration time' claim ('exp') is too far in the future";
  return undefined;
}
