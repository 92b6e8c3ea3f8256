import { createHmac, timingSafeEqual } from 'node:crypto';

/** Tolerance of receivers (spec "Signature"): 300 seconds either way. */
export const SIGNATURE_TOLERANCE_SECONDS = 300;

/**
 * `X-Webhook-Signature`: `t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<raw body>">`
 * keyed with the webhook secret (spec "Signature").
 */
export function signWebhook(secret: string, rawBody: string | Uint8Array, unixSeconds: number): string {
  const mac = createHmac('sha256', secret).update(`${unixSeconds}.`).update(rawBody).digest('hex');
  return `t=${unixSeconds},v1=${mac}`;
}

/**
 * Check a delivery the way a receiver should: over the raw bytes, in
 * constant time, refusing a `t` more than `toleranceSeconds` from `now`
 * (either direction). Returns false for anything malformed.
 */
export function verifyWebhookSignature(
  rawBody: string | Uint8Array,
  header: string | undefined,
  secret: string,
  o: { toleranceSeconds?: number; now?: number } = {},
): boolean {
  if (!header) return false;
  let t: number | undefined;
  const sigs: string[] = [];
  for (const part of header.split(',')) {
    const eq = part.indexOf('=');
    if (eq < 0) continue;
    const k = part.slice(0, eq).trim();
    const v = part.slice(eq + 1).trim();
    if (k === 't' && /^\d{1,12}$/.test(v)) t = Number(v);
    else if (k === 'v1' && /^[0-9a-f]{64}$/.test(v)) sigs.push(v);
  }
  if (t === undefined || sigs.length === 0) return false;
  const nowSec = Math.floor((o.now ?? Date.now()) / 1000);
  if (Math.abs(nowSec - t) > (o.toleranceSeconds ?? SIGNATURE_TOLERANCE_SECONDS)) return false;
  const want = Buffer.from(signWebhook(secret, rawBody, t).slice(`t=${t},v1=`.length), 'hex');
  return sigs.some((s) => {
    const got = Buffer.from(s, 'hex');
    return got.length === want.length && timingSafeEqual(got, want);
  });
}
