import { classifyAddress } from './address-policy';

/**
 * Registration-time SSRF check (spec "Webhook": the host must not be a
 * private or link-local IP literal). Works on the WHATWG-normalised host, so
 * decimal, octal and hex IPv4 forms (`https://2130706433/`, `https://0x7f.1/`)
 * arrive as dotted quads and IPv6 literals as compressed hex. IP literals are
 * judged by the one address policy (./address-policy.ts), the same function
 * the delivery side applies at connect and to every resolved address. Names
 * are not resolved here; the delivery side resolves and checks again.
 */

/** Is a URL hostname (as `new URL().hostname` gives it) an IP literal that the address policy refuses? */
export function isForbiddenHostLiteral(hostname: string): boolean {
  const c = classifyAddress(hostname);
  return c.ip && !c.public;
}

export const WEBHOOK_URL_MAX = 2048;

/** Is this URL hostname loopback: `localhost` (or a name under `.localhost`), a 127.0.0.0/8 or `::1` literal? */
export function isLoopbackHost(hostname: string): boolean {
  const h = hostname.toLowerCase().replace(/\.$/, '');
  if (h === 'localhost' || h.endsWith('.localhost')) return true;
  const c = classifyAddress(h);
  return c.ip && c.range === 'loopback';
}

/** Is this an http:// or https:// URL whose host is loopback (local webhook development, issue 16)? */
export function isLoopbackWebhookUrl(raw: string): boolean {
  let u: URL;
  try {
    u = new URL(raw);
  } catch {
    return false;
  }
  return (u.protocol === 'http:' || u.protocol === 'https:') && isLoopbackHost(u.hostname);
}

/**
 * Why a webhook URL is refused, or null: https only, at most 2048 characters, no non-public IP literal host.
 * With `allowLoopback` (local development, off by default), http:// and https:// URLs whose host is loopback pass.
 */
export function webhookUrlProblem(raw: string, o: { allowLoopback?: boolean } = {}): { code: string; message: string } | null {
  if (raw.length > WEBHOOK_URL_MAX) return { code: 'too_long', message: `must be at most ${WEBHOOK_URL_MAX} characters` };
  if (o.allowLoopback && isLoopbackWebhookUrl(raw)) return null;
  let u: URL;
  try {
    u = new URL(raw);
  } catch {
    return { code: 'invalid_url', message: 'must be an absolute https:// URL' };
  }
  if (u.protocol !== 'https:') return { code: 'https_required', message: 'must use https://' };
  if (!u.hostname) return { code: 'invalid_url', message: 'must name a host' };
  if (isForbiddenHostLiteral(u.hostname)) {
    return { code: 'private_address', message: 'the host is a private, loopback, link-local or otherwise non-public IP address' };
  }
  return null;
}
