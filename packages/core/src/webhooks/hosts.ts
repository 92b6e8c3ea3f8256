import { isIPv4, isIPv6 } from 'node:net';

/**
 * Registration-time SSRF check (spec "Webhook": the host must not be a
 * private or link-local IP literal). Works on the WHATWG-normalised host, so
 * decimal, octal and hex IPv4 forms (`https://2130706433/`, `https://0x7f.1/`)
 * arrive as dotted quads and IPv6 literals as compressed hex. Names are not
 * resolved here; the delivery side resolves and checks again.
 */

function v4ToInt(ip: string): number {
  return ip.split('.').reduce((n, p) => n * 256 + Number(p), 0);
}

/** [network, prefix length] of IPv4 ranges that are not public unicast. */
const V4_BLOCKED: Array<[string, number]> = [
  ['0.0.0.0', 8], // "this" network
  ['10.0.0.0', 8], // private
  ['100.64.0.0', 10], // CGNAT
  ['127.0.0.0', 8], // loopback
  ['169.254.0.0', 16], // link-local
  ['172.16.0.0', 12], // private
  ['192.0.0.0', 24], // IETF protocol assignments
  ['192.0.2.0', 24], // documentation
  ['192.168.0.0', 16], // private
  ['198.18.0.0', 15], // benchmarking
  ['198.51.100.0', 24], // documentation
  ['203.0.113.0', 24], // documentation
  ['224.0.0.0', 3], // multicast, reserved, broadcast
];

export function isBlockedIPv4(ip: string): boolean {
  const n = v4ToInt(ip);
  return V4_BLOCKED.some(([net, len]) => {
    const mask = len === 0 ? 0 : (0xffffffff << (32 - len)) >>> 0;
    return ((n & mask) >>> 0) === ((v4ToInt(net) & mask) >>> 0);
  });
}

/** The eight 16-bit groups of an IPv6 address (with an embedded dotted IPv4 tail expanded). */
function v6Groups(ip: string): number[] {
  let s = ip.toLowerCase();
  const tail = /(\d+\.\d+\.\d+\.\d+)$/.exec(s);
  if (tail) {
    const n = v4ToInt(tail[1]!);
    s = `${s.slice(0, tail.index)}${(n >>> 16).toString(16)}:${(n & 0xffff).toString(16)}`;
  }
  const [head, rest] = s.includes('::') ? s.split('::') : [s, undefined];
  const h = head ? head.split(':') : [];
  const r = rest === undefined ? [] : rest ? rest.split(':') : [];
  const fill = rest === undefined ? 0 : 8 - h.length - r.length;
  return [...h, ...Array(fill).fill('0'), ...r].map((g) => parseInt(g, 16));
}

export function isBlockedIPv6(ip: string): boolean {
  const g = v6Groups(ip.replace(/%.*$/, ''));
  const [a] = g as [number];
  if (g.slice(0, 6).every((x) => x === 0)) return true; // ::, ::1, IPv4-compatible ::a.b.c.d
  if (g.slice(0, 5).every((x) => x === 0) && g[5] === 0xffff) return true; // IPv4-mapped ::ffff:a.b.c.d
  if ((a & 0xfe00) === 0xfc00) return true; // unique-local fc00::/7
  if ((a & 0xffc0) === 0xfe80) return true; // link-local fe80::/10
  if ((a & 0xffc0) === 0xfec0) return true; // site-local (deprecated) fec0::/10
  if ((a & 0xff00) === 0xff00) return true; // multicast
  if (a === 0x2001 && g[1] === 0x0db8) return true; // documentation
  const embedded = (hi: number, lo: number) => `${hi >>> 8}.${hi & 255}.${lo >>> 8}.${lo & 255}`;
  if (a === 0x64 && g[1] === 0xff9b && g.slice(2, 6).every((x) => x === 0)) return isBlockedIPv4(embedded(g[6]!, g[7]!)); // NAT64
  if (a === 0x2002) return isBlockedIPv4(embedded(g[1]!, g[2]!)); // 6to4
  return false;
}

/** Is a URL hostname (as `new URL().hostname` gives it) an IP literal in a refused range? */
export function isForbiddenHostLiteral(hostname: string): boolean {
  const h = hostname.startsWith('[') && hostname.endsWith(']') ? hostname.slice(1, -1) : hostname;
  if (isIPv4(h)) return isBlockedIPv4(h);
  if (isIPv6(h)) return isBlockedIPv6(h);
  return false;
}

export const WEBHOOK_URL_MAX = 2048;

/** Why a webhook URL is refused, or null: https only, at most 2048 characters, no private IP literal host. */
export function webhookUrlProblem(raw: string): { code: string; message: string } | null {
  if (raw.length > WEBHOOK_URL_MAX) return { code: 'too_long', message: `must be at most ${WEBHOOK_URL_MAX} characters` };
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
