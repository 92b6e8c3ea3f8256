import { createHmac, timingSafeEqual } from 'node:crypto';
import { ProblemError } from '../errors/problem';

/** What a cursor carries; signed, so a client cannot forge or alter it. */
export interface CursorPayload {
  v: 1;
  /** resource path */
  r: string;
  /** workspace */
  w: string;
  /** normalised sort (`-order`) */
  s: string;
  /** fingerprint of the filters */
  f: string;
  /** boundary: last row's sort value and id */
  b: [unknown, string];
  /** issued at (ms) */
  t: number;
}

export const CURSOR_TTL_MS = 24 * 60 * 60 * 1000;

export function encodeCursor(p: CursorPayload, secret: Uint8Array): string {
  const body = Buffer.from(JSON.stringify(p)).toString('base64url');
  return `${body}.${mac(body, secret)}`;
}

/** Verify and open a cursor; anything wrong with it is `cursor_invalid`. */
export function decodeCursor(raw: string, secret: Uint8Array, now: number): CursorPayload {
  const bad = (why: string) => new ProblemError('cursor_invalid', `The cursor is not valid here: ${why}`);
  const dot = raw.indexOf('.');
  if (dot <= 0 || raw.length > 4096) throw bad('malformed');
  const body = raw.slice(0, dot);
  const sig = Buffer.from(raw.slice(dot + 1), 'base64url');
  const want = Buffer.from(mac(body, secret), 'base64url');
  if (sig.length !== want.length || !timingSafeEqual(sig, want)) throw bad('signature mismatch');
  let p: CursorPayload;
  try {
    p = JSON.parse(Buffer.from(body, 'base64url').toString('utf8')) as CursorPayload;
  } catch {
    throw bad('malformed');
  }
  if (p.v !== 1 || !Array.isArray(p.b) || typeof p.t !== 'number') throw bad('malformed');
  if (now - p.t > CURSOR_TTL_MS || p.t - now > 60_000) throw bad('expired');
  return p;
}

function mac(body: string, secret: Uint8Array): string {
  return createHmac('sha256', secret).update(body).digest('base64url');
}
