import { createHash, timingSafeEqual } from 'node:crypto';

/** RFC 7636 §4.2: S256 challenge = BASE64URL(SHA256(ASCII(code_verifier))), 43 characters. */
export const CODE_CHALLENGE_RE = /^[A-Za-z0-9_-]{43}$/;
/** RFC 7636 §4.1: 43-128 unreserved characters. */
export const CODE_VERIFIER_RE = /^[A-Za-z0-9\-._~]{43,128}$/;

/** The S256 challenge of a verifier (RFC 7636 §4.2). */
export function s256(verifier: string): string {
  return createHash('sha256').update(verifier, 'ascii').digest('base64url');
}

/** Does `verifier` answer `challenge` (S256, compared in constant time)? */
export function verifyPkce(verifier: string, challenge: string): boolean {
  const a = Buffer.from(s256(verifier));
  const b = Buffer.from(challenge);
  return a.length === b.length && timingSafeEqual(a, b);
}
