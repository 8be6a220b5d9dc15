// GitHub signs each delivery with the hook's secret: X-Hub-Signature-256 is
// `sha256=` + hex HMAC-SHA256 of the exact body bytes. Checked here on the raw bytes, in
// constant time, before the body is parsed.
import { createHmac, timingSafeEqual } from 'node:crypto';

const prefix = 'sha256=';

/**
 * Whether `header` is a valid signature of `body` under one of `secrets` (several during
 * a rotation: the new secret first, the old one until GitHub uses the new one).
 */
export function signatureMatches(secrets: readonly string[], body: Buffer, header: string | undefined): boolean {
  if (!header || !header.startsWith(prefix)) return false;
  const hex = header.slice(prefix.length);
  if (!/^[0-9a-f]{64}$/i.test(hex)) return false;
  const given = Buffer.from(hex, 'hex');
  let match = false;
  // Every secret is tried, so the time taken does not tell which one matched.
  for (const secret of secrets) {
    const expected = createHmac('sha256', secret).update(body).digest();
    if (timingSafeEqual(expected, given)) match = true;
  }
  return match;
}
