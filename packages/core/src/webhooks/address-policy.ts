import ipaddr from 'ipaddr.js';

/**
 * The one SSRF address policy for webhook targets (issue 9 item 6). The same
 * function decides at registration (`webhookUrlProblem`, for IP-literal
 * hosts), at connect (the @pmapi/webhooks undici connector, for IP-literal
 * hosts, which Node never resolves) and after name resolution (the
 * @pmapi/webhooks `lookup`, for every resolved address).
 *
 * Built on ipaddr.js's range classification. Only a public unicast address
 * passes:
 *
 * - IPv4: only ipaddr.js's `unicast` range. Refused: 0.0.0.0/8, 10/8,
 *   100.64/10, 127/8, 169.254/16, 172.16/12, 192.168/16, 192.0.0/24, the
 *   documentation ranges (192.0.2/24, 198.51.100/24, 203.0.113/24),
 *   198.18/15, 192.88.99/24 (6to4 relay anycast), AS112 and AMT anycast,
 *   224/4 multicast and 240/4 (including 255.255.255.255).
 * - IPv6: only ipaddr.js's `unicast` range AND inside 2000::/3, the only
 *   block IANA has allocated for global unicast (ipaddr.js calls every
 *   unlisted address `unicast`, e.g. `::7f00:1` or `4000::1`; unallocated
 *   space is never a public host). Refused besides: `::`, `::1`, fe80::/10,
 *   fec0::/10, fc00::/7, ff00::/8, 100::/64, 2001:db8::/32, 3fff::/20,
 *   2001:2::/48, ORCHID, segment routing and the other special ranges.
 * - Zone ids (`fe80::1%eth0`): any address carrying one is refused; a zone
 *   only means something for a scoped (link-local) address, and a public
 *   host never needs one.
 * - IPv4-embedding (translation) forms are refused OUTRIGHT, whatever IPv4
 *   address they embed: IPv4-mapped `::ffff:a.b.c.d`, SIIT `::ffff:0:a.b.c.d`
 *   (rfc6145), IPv4-compatible `::a.b.c.d` (::/96 other than `::` and `::1`),
 *   NAT64 `64:ff9b::/96` and `64:ff9b:1::/48` (rfc6052), 6to4 `2002::/16`
 *   and Teredo `2001::/32`. A webhook receiver that is a public host is
 *   reachable by its own IPv4 or native IPv6 address and never needs one of
 *   these spellings, while each of them can smuggle a private IPv4 target
 *   past a check that looks at the IPv6 form only (and some stacks route them
 *   to the embedded address). The embedded IPv4 is still extracted (Teredo:
 *   the client address, the last 32 bits XOR 0xffffffff) and reported in
 *   {@link classifyAddress}'s result, so a log can say what was hidden there.
 *
 * Input is an address as a URL host (`new URL().hostname`, which already
 * turns decimal, octal and hex IPv4 spellings into dotted quads and
 * compresses IPv6; square brackets are accepted) or as a resolver returns it.
 * Anything that is not an IP address is not public.
 */

/** What the policy says about one address. */
export type AddressClass =
  /** Not an IP address (a name, or garbage). */
  | { ip: false; public: false }
  | {
      ip: true;
      /** True only for a public unicast address. */
      public: boolean;
      family: 4 | 6;
      /**
       * Why: ipaddr.js's range name (`unicast`, `loopback`, `private`,
       * `ipv4Mapped`, `teredo`, …), or `ipv4Compatible` for ::/96,
       * `unallocated` for IPv6 outside 2000::/3, `zoned` for an otherwise
       * public address with a zone id.
       */
      range: string;
      /** The IPv4 address an IPv6 translation form embeds (Teredo: the client), when it has one. */
      embeddedIPv4?: string;
      /** The policy's verdict on {@link embeddedIPv4} on its own (informational; the form is refused anyway). */
      embeddedPublic?: boolean;
    };

/** The fixed reason shown to callers for a refused target; it never names the host or the resolved address. */
export const REFUSED_TARGET_MESSAGE = 'target refused: not a public address';

/** IPv6 ranges that carry an IPv4 address, and where it sits. Refused outright (see the module comment). */
const EMBEDDING_RANGES = new Set(['ipv4Mapped', 'rfc6145', 'rfc6052', '6to4', 'teredo', 'ipv4Compatible']);

function unbracket(s: string): string {
  return s.length > 1 && s.startsWith('[') && s.endsWith(']') ? s.slice(1, -1) : s;
}

function v4FromInt(n: number): string {
  return [n >>> 24, (n >>> 16) & 255, (n >>> 8) & 255, n & 255].join('.');
}

/** The IPv4 address embedded in an IPv6 address of one of the translation ranges. */
function embeddedIPv4(parts: number[], range: string): string | undefined {
  const at = (hi: number, lo: number) => v4FromInt(((parts[hi]! << 16) | parts[lo]!) >>> 0);
  switch (range) {
    case 'ipv4Mapped':
    case 'rfc6145':
    case 'ipv4Compatible':
      return at(6, 7);
    case 'rfc6052':
      // 64:ff9b::/96 carries it in the last 32 bits; the local-use 64:ff9b:1::/48
      // may use any RFC 6052 prefix length, of which /96 is the common one.
      return at(6, 7);
    case '6to4':
      return at(1, 2);
    case 'teredo':
      // Teredo: server IPv4 in groups 2-3, client IPv4 XOR 0xffffffff in groups 6-7.
      return v4FromInt((((parts[6]! << 16) | parts[7]!) ^ 0xffffffff) >>> 0);
    default:
      return undefined;
  }
}

function parse(address: string): ipaddr.IPv4 | ipaddr.IPv6 | undefined {
  const s = unbracket(address);
  // ipaddr.isValid also accepts the classic inet_aton spellings (`0x7f.1`,
  // `2130706433`) and judges them by the address they denote, as WHATWG URL
  // parsing and getaddrinfo do.
  if (!ipaddr.isValid(s)) return undefined;
  try {
    return ipaddr.parse(s);
  } catch {
    return undefined;
  }
}

/**
 * Classify one address under the policy (see the module comment).
 *
 * @example
 * classifyAddress('2002:7f00:1::');
 * // { ip: true, public: false, family: 6, range: '6to4', embeddedIPv4: '127.0.0.1', embeddedPublic: false }
 */
export function classifyAddress(address: string): AddressClass {
  const ip = parse(address);
  if (!ip) return { ip: false, public: false };
  if (ip.kind() === 'ipv4') {
    const range = ip.range();
    return { ip: true, public: range === 'unicast', family: 4, range };
  }
  const v6 = ip as ipaddr.IPv6;
  const parts = v6.parts;
  let range: string = v6.range();
  // ipaddr.js has no IPv4-compatible range: ::/96 other than :: and ::1 comes back as `unicast`.
  // (It also reads the dotted spelling `::a.b.c.d` as IPv4-mapped; refused either way.)
  if (range === 'unicast' && parts.slice(0, 6).every((g) => g === 0)) range = 'ipv4Compatible';
  if (EMBEDDING_RANGES.has(range)) {
    const embedded = embeddedIPv4(parts, range);
    const out: AddressClass = { ip: true, public: false, family: 6, range };
    if (embedded !== undefined) {
      out.embeddedIPv4 = embedded;
      out.embeddedPublic = classifyAddress(embedded).public;
    }
    return out;
  }
  if (range === 'unicast' && (parts[0]! & 0xe000) !== 0x2000) range = 'unallocated';
  if (range === 'unicast' && v6.zoneId !== undefined) range = 'zoned';
  return { ip: true, public: range === 'unicast', family: 6, range };
}

/** Is this a public unicast address a webhook may reach? Names and garbage are not. */
export function isPublicAddress(address: string): boolean {
  return classifyAddress(address).public;
}

/** Is this host (a URL hostname, brackets allowed, or a resolver's answer) an IP address rather than a name? */
export function isIpLiteral(host: string): boolean {
  return classifyAddress(host).ip;
}
