import { describe, expect, it } from 'vitest';
import { classifyAddress, isForbiddenHostLiteral, isIpLiteral, isPublicAddress, REFUSED_TARGET_MESSAGE, webhookUrlProblem } from '@pmapi/core';

/** Every address the one policy must refuse, with the reason it gives. */
const REFUSED: Array<[address: string, range: string]> = [
  ['127.0.0.1', 'loopback'],
  ['127.255.255.254', 'loopback'],
  ['10.0.0.1', 'private'],
  ['10.255.255.255', 'private'],
  ['172.16.0.1', 'private'],
  ['172.31.255.255', 'private'],
  ['192.168.1.1', 'private'],
  ['169.254.169.254', 'linkLocal'],
  ['100.64.0.1', 'carrierGradeNat'],
  ['100.127.255.254', 'carrierGradeNat'],
  ['0.0.0.0', 'unspecified'],
  ['0.1.2.3', 'unspecified'],
  ['255.255.255.255', 'broadcast'],
  ['224.0.0.1', 'multicast'],
  ['239.255.255.250', 'multicast'],
  ['240.0.0.1', 'reserved'],
  ['192.0.0.8', 'reserved'],
  ['198.18.0.1', 'reserved'], // benchmarking; ipaddr.js files it under reserved
  ['192.88.99.1', 'reserved'],
  // Documentation ranges.
  ['192.0.2.1', 'reserved'],
  ['198.51.100.7', 'reserved'],
  ['203.0.113.9', 'reserved'],
  ['2001:db8::1', 'reserved'],
  ['3fff::1', 'reserved'],
  // IPv6 specials.
  ['::1', 'loopback'],
  ['::', 'unspecified'],
  ['fe80::1', 'linkLocal'],
  ['fe80::1%eth0', 'linkLocal'],
  ['[fe80::1]', 'linkLocal'],
  ['fec0::1', 'deprecatedSiteLocal'],
  ['fc00::1', 'uniqueLocal'],
  ['fd12:3456::1', 'uniqueLocal'],
  ['ff02::1', 'multicast'],
  ['100::1', 'discard'],
  ['2001:2::1', 'benchmarking'],
  ['4000::1', 'unallocated'],
  ['::2:0:0:1', 'unallocated'],
  // IPv4-embedding forms.
  ['::ffff:127.0.0.1', 'ipv4Mapped'],
  ['::ffff:7f00:1', 'ipv4Mapped'],
  ['[::ffff:7f00:1]', 'ipv4Mapped'],
  ['::ffff:0:7f00:1', 'rfc6145'],
  ['::7f00:1', 'ipv4Compatible'],
  ['::a9fe:a9fe', 'ipv4Compatible'],
  ['::127.0.0.1', 'ipv4Mapped'], // ipaddr.js reads the dotted ::a.b.c.d spelling as mapped; refused either way
  ['64:ff9b::7f00:1', 'rfc6052'],
  ['64:ff9b::a9fe:a9fe', 'rfc6052'],
  ['64:ff9b:1::a00:1', 'rfc6052'],
  ['2002:7f00:1::', '6to4'],
  ['2002:a9fe:a9fe::1', '6to4'],
  ['2001:0:4136:e378:8000:63bf:80ff:fffe', 'teredo'],
];

/** Public addresses, and translation forms refused outright although what they embed is public. */
const PUBLIC = ['93.184.216.34', '2606:4700::1111', '1.1.1.1', '8.8.8.8', '[2606:4700:4700::1111]', '2a00:1450:4001:80e::200e'];
const PUBLIC_EMBEDDED: Array<[address: string, range: string, embedded: string]> = [
  ['::ffff:1.1.1.1', 'ipv4Mapped', '1.1.1.1'],
  ['::101:101', 'ipv4Compatible', '1.1.1.1'],
  ['64:ff9b::101:101', 'rfc6052', '1.1.1.1'],
  ['2002:101:101::1', '6to4', '1.1.1.1'],
  // Teredo: client 1.1.1.1 XOR 0xffffffff = fefe:fefe.
  ['2001:0:4136:e378:8000:63bf:fefe:fefe', 'teredo', '1.1.1.1'],
];

/** A URL whose host is this address (brackets for IPv6). */
const urlOf = (a: string) => (a.includes(':') && !a.startsWith('[') ? `https://[${a}]/x` : `https://${a}/x`);

describe('the one webhook address policy (SSRF, issue 9 item 6)', () => {
  it.each(REFUSED)('refuses %s (%s)', (address, range) => {
    expect(isPublicAddress(address)).toBe(false);
    expect(classifyAddress(address)).toMatchObject({ ip: true, public: false, range });
    expect(isIpLiteral(address)).toBe(true);
  });

  it.each(PUBLIC)('accepts %s', (address) => {
    expect(isPublicAddress(address)).toBe(true);
    expect(classifyAddress(address)).toMatchObject({ ip: true, public: true, range: 'unicast' });
  });

  it('extracts the embedded IPv4 of every translation form and judges it by the IPv4 policy', () => {
    const embedded: Array<[string, string, boolean]> = [
      ['::ffff:127.0.0.1', '127.0.0.1', false],
      ['::ffff:7f00:1', '127.0.0.1', false],
      ['::7f00:1', '127.0.0.1', false],
      ['::a9fe:a9fe', '169.254.169.254', false],
      ['::127.0.0.1', '127.0.0.1', false],
      ['64:ff9b::7f00:1', '127.0.0.1', false],
      ['64:ff9b::a9fe:a9fe', '169.254.169.254', false],
      ['2002:7f00:1::', '127.0.0.1', false],
      ['2002:a9fe:a9fe::1', '169.254.169.254', false],
      // 0x80ff_fffe ^ 0xffff_ffff = 0x7f00_0001; the server (4136:e378 = 65.54.227.120) is public but is not the target.
      ['2001:0:4136:e378:8000:63bf:80ff:fffe', '127.0.0.1', false],
    ];
    for (const [address, ipv4, pub] of embedded) {
      expect(classifyAddress(address), address).toMatchObject({ public: false, embeddedIPv4: ipv4, embeddedPublic: pub });
    }
  });

  it.each(PUBLIC_EMBEDDED)('refuses the translation form %s (%s) outright, even embedding the public %s', (address, range, ipv4) => {
    expect(classifyAddress(address)).toMatchObject({ ip: true, public: false, range, embeddedIPv4: ipv4, embeddedPublic: true });
  });

  it('names and garbage are not IP literals and never public', () => {
    for (const s of ['hooks.example.com', 'localhost', 'x.invalid', '', '[]', '1.2.3.4.5', '::g', 'fe80::1%', ' 1.1.1.1']) {
      expect(isPublicAddress(s), s).toBe(false);
      expect(isIpLiteral(s), s).toBe(false);
    }
  });

  it('inet_aton spellings are judged by the address they denote', () => {
    for (const s of ['2130706433', '0x7f.1', '0177.0.0.1', '017700000001', '127.1']) expect(classifyAddress(s), s).toMatchObject({ ip: true, public: false, range: 'loopback' });
  });

  it('a public address with a zone id is refused', () => {
    expect(classifyAddress('2606:4700::1111%eth0')).toMatchObject({ ip: true, public: false, range: 'zoned' });
  });

  it('registration agrees with the policy on every row (URL and bare host literal)', () => {
    for (const [address] of REFUSED) {
      expect(isForbiddenHostLiteral(address), address).toBe(true);
      // A zone id cannot be written in a URL at all (WHATWG): refused as invalid_url instead.
      const p = webhookUrlProblem(urlOf(address));
      expect(p?.code, address).toBe(address.includes('%') ? 'invalid_url' : 'private_address');
    }
    for (const [address] of PUBLIC_EMBEDDED) {
      expect(isForbiddenHostLiteral(address), address).toBe(true);
      expect(webhookUrlProblem(urlOf(address))?.code, address).toBe('private_address');
    }
    for (const address of PUBLIC) {
      expect(isForbiddenHostLiteral(address), address).toBe(false);
      expect(webhookUrlProblem(urlOf(address)), address).toBeNull();
    }
  });

  it('registration refuses WHATWG-normalised spellings of refused addresses', () => {
    for (const url of ['https://2130706433/', 'https://0x7f.1/', 'https://0177.0.0.1/', 'https://017700000001/', 'https://0xa9fea9fe/latest',
      'https://[::7f00:1]/x', 'https://[0:0:0:0:0:0:7f00:1]/x', 'https://[::127.0.0.1]/x', 'https://[::FFFF:7F00:1]/x', 'https://[2002:7F00:0001::]/x']) {
      expect(webhookUrlProblem(url)?.code, url).toBe('private_address');
    }
    expect(webhookUrlProblem('https://hooks.example.com/in')).toBeNull();
  });

  it('the refusal shown to callers is one fixed string', () => {
    expect(REFUSED_TARGET_MESSAGE).toBe('target refused: not a public address');
  });
});
