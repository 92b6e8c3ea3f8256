import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createWebhookSender, isPublicAddress, redactAddresses, shortError, type HostLookup } from '@pmapi/webhooks';
import { isForbiddenHostLiteral, webhookUrlProblem } from '@pmapi/core';
import { httpsReceiver, selfSignedCert, type Receiver } from './helpers';

const tls = selfSignedCert();
const req = (url: string) => ({ url, headers: { 'Content-Type': 'application/json' }, body: '{"a":1}' });
/** The only reason a refused target ever gets: it names neither the host nor the address. */
const REFUSED = 'target refused: not a public address';

describe('Webhooks Delivery semantics rules 2-3: the sender (undici, real HTTPS)', () => {
  let rx: Receiver;
  const sender = createWebhookSender({ allowPrivateTargets: true, connect: { ca: tls.cert }, timeoutMs: 300 });
  beforeAll(async () => {
    rx = await httpsReceiver(tls);
  });
  afterAll(async () => {
    await sender.close();
    await rx.close();
  });

  it('any 2xx succeeds; the body and headers arrive as given', async () => {
    for (const status of [200, 201, 202, 204, 299]) {
      rx.answer = () => ({ status, body: status === 204 ? undefined : 'ok' });
      const r = await sender(req(`${rx.url}/in`));
      expect(r).toMatchObject({ ok: true, status, error: null });
      expect(r.durationMs).toBeGreaterThanOrEqual(0);
    }
    const last = rx.hits.at(-1)!;
    expect(last.body).toBe('{"a":1}');
    expect(last.headers['content-type']).toBe('application/json');
  });

  it('other statuses fail with a short reason', async () => {
    for (const status of [400, 404, 410, 500, 503]) {
      rx.answer = () => ({ status, body: 'nope' });
      expect(await sender(req(`${rx.url}/in`))).toMatchObject({ ok: false, status, error: `HTTP ${status}` });
    }
  });

  it('a redirect is not followed and fails; its target is never hit', async () => {
    rx.hits.length = 0;
    rx.answer = (h) => (h.path === '/moved' ? { status: 302, headers: { location: `${rx.url}/target` } } : { status: 200 });
    const r = await sender(req(`${rx.url}/moved`));
    expect(r).toMatchObject({ ok: false, status: 302 });
    expect(r.error).toMatch(/redirect not followed/);
    expect(rx.hits.map((h) => h.path)).toEqual(['/moved']);
  });

  it('a receiver slower than timeoutMs fails with "timeout"', async () => {
    rx.answer = () => ({ status: 200, delayMs: 2_000 });
    const t0 = Date.now();
    const r = await sender(req(`${rx.url}/slow`));
    expect(r).toMatchObject({ ok: false, status: null, error: 'timeout' });
    expect(Date.now() - t0).toBeLessThan(1_500);
  });

  it('a huge response body is read only up to the cap and dropped', async () => {
    const capped = createWebhookSender({ allowPrivateTargets: true, connect: { ca: tls.cert }, maxResponseBytes: 1024 });
    rx.answer = () => ({ status: 200, body: Buffer.alloc(8 * 1024 * 1024, 97) });
    const r = await capped(req(`${rx.url}/big`));
    expect(r).toMatchObject({ ok: true, status: 200 });
    await capped.close();
  });

  it('connection errors fail with status null', async () => {
    const dead = await httpsReceiver(tls);
    const url = dead.url;
    await dead.close();
    const r = await sender(req(`${url}/in`));
    expect(r.ok).toBe(false);
    expect(r.status).toBeNull();
    expect(r.error).toMatch(/ECONNREFUSED/);
    // Issue 9 item 6: reasons shown to callers never name the address the name resolved to.
    expect(r.error).toBe('ECONNREFUSED: connection refused');
    expect(r.error).not.toContain('127.0.0.1');
  });

  it('addresses inside other error messages are redacted', () => {
    expect(redactAddresses('connect to 10.1.2.3:443 failed')).toBe('connect to <address> failed');
    expect(redactAddresses('host [2001:db8::1]:8443 said no')).toBe('host <address> said no');
    expect(redactAddresses('fe80::1 and ::ffff:127.0.0.1')).not.toMatch(/fe80|127\.0/);
    expect(redactAddresses('HTTP 503 at 12:30')).toBe('HTTP 503 at 12:30');
  });

  it('an untrusted certificate fails (TLS is verified)', async () => {
    const strict = createWebhookSender({ allowPrivateTargets: true });
    const r = await strict(req(`${rx.url}/in`));
    expect(r.ok).toBe(false);
    expect(r.error).toMatch(/certificate/i);
    await strict.close();
  });

  it('only https:// URLs are sent', async () => {
    expect(await sender(req(`http://127.0.0.1:${rx.port}/in`))).toMatchObject({ ok: false, error: 'refused: https required' });
  });
});

describe('Webhooks Subscribing rule 4: private targets refused at delivery (SSRF)', () => {
  let rx: Receiver;
  let rx6: Receiver | undefined;
  const strict = createWebhookSender({ connect: { ca: tls.cert }, timeoutMs: 2_000 });
  beforeAll(async () => {
    rx = await httpsReceiver(tls);
    try {
      rx6 = await httpsReceiver(tls, '::1');
    } catch {
      rx6 = undefined; // no IPv6 loopback on this machine
    }
  });
  afterAll(async () => {
    await strict.close();
    await rx.close();
    await rx6?.close();
  });

  it('IP-literal hosts in non-public ranges are refused by the connector, without connecting', async () => {
    const urls = [
      `https://127.0.0.1:${rx.port}/`, 'https://127.0.0.1/', 'https://[::1]/', `https://[::ffff:127.0.0.1]:${rx.port}/`,
      'https://10.1.2.3/', 'https://172.16.0.1/', 'https://192.168.1.1/', 'https://169.254.169.254/latest/meta-data',
      'https://100.64.0.1/', 'https://0.0.0.0/', 'https://[::]/', 'https://[fd00::1]/', 'https://[fe80::1]/',
      'https://224.0.0.1/', 'https://255.255.255.255/', 'https://2130706433/', 'https://0x7f.1/',
    ];
    if (rx6) urls.push(`https://[::1]:${rx6.port}/`);
    for (const url of urls) {
      const r = await strict(req(url));
      expect(r.ok, url).toBe(false);
      expect(r.error, url).toBe(REFUSED);
    }
    expect(rx.hits).toHaveLength(0);
    expect(rx6?.hits ?? []).toHaveLength(0);
  });

  it('a name resolving to 127.0.0.1 is refused by the lookup; allowed explicitly, the connection goes to the checked address', async () => {
    const lookup: HostLookup = async (h) => (h === 'hooks.example.test' ? [{ address: '127.0.0.1', family: 4 }] : []);
    const guarded = createWebhookSender({ connect: { ca: tls.cert }, lookup });
    const r = await guarded(req(`https://hooks.example.test:${rx.port}/in`));
    expect(r).toMatchObject({ ok: false, status: null });
    expect(r.error).toBe(REFUSED);
    expect(rx.hits).toHaveLength(0);
    await guarded.close();

    const dev = createWebhookSender({ connect: { ca: tls.cert }, lookup, allowPrivateTargets: true });
    expect(await dev(req(`https://hooks.example.test:${rx.port}/in`))).toMatchObject({ ok: true, status: 204 });
    expect(rx.hits).toHaveLength(1);
    await dev.close();
    rx.hits.length = 0;
  });

  it('a name is refused if ANY of its addresses is non-public (no picking the public one)', async () => {
    const lookup: HostLookup = async () => [{ address: '93.184.215.14', family: 4 }, { address: '10.0.0.7', family: 4 }];
    const guarded = createWebhookSender({ lookup, timeoutMs: 1_000 });
    const r = await guarded(req('https://mixed.example.test/in'));
    expect(r.error).toBe(REFUSED);
    await guarded.close();
  });

  it('isPublicAddress: only global unicast passes', () => {
    for (const a of ['127.0.0.1', '::1', '10.0.0.1', '172.31.255.255', '192.168.0.1', '169.254.1.1', '100.64.0.1', '0.0.0.0', '::',
      '::ffff:8.8.8.8', '::ffff:127.0.0.1', '::7f00:1', '::a9fe:a9fe', 'fc00::1', 'fd12::1', 'fe80::1', 'ff02::1', '224.0.0.1', '255.255.255.255', 'not-an-ip']) {
      expect(isPublicAddress(a), a).toBe(false);
    }
    for (const a of ['8.8.8.8', '93.184.215.14', '1.1.1.1', '2606:4700:4700::1111', '[2001:4860:4860::8888]']) {
      expect(isPublicAddress(a), a).toBe(true);
    }
  });

  it('error strings are at most 1 KiB', () => {
    expect(Buffer.byteLength(shortError('é'.repeat(5000)))).toBeLessThanOrEqual(1024);
    expect(shortError('short')).toBe('short');
  });
});

/** Every row the one policy (core `classifyAddress`) must refuse, at registration and at delivery alike. */
const POLICY_REFUSES = [
  '127.0.0.1', '10.0.0.1', '10.200.3.4', '172.16.0.1', '172.31.255.254', '192.168.0.1', '192.168.255.1', '169.254.169.254',
  '100.64.0.1', '100.127.1.1', '0.0.0.0', '255.255.255.255', '224.0.0.1', '239.1.2.3',
  '::1', '::', 'fe80::1%eth0', 'fe80::1', 'fc00::1', 'fd00::1',
  '::ffff:127.0.0.1', '::ffff:7f00:1', '::7f00:1', '::a9fe:a9fe', '::127.0.0.1',
  '64:ff9b::7f00:1', '64:ff9b::a9fe:a9fe', '64:ff9b:1::a00:1',
  '2002:7f00:1::', '2002:a9fe:a9fe::1',
  // Teredo: client IPv4 = last 32 bits XOR 0xffffffff; 0x80fffffe ^ 0xffffffff = 0x7f000001 = 127.0.0.1.
  '2001:0:4136:e378:8000:63bf:80ff:fffe',
  // Documentation ranges.
  '192.0.2.1', '198.51.100.1', '203.0.113.1', '2001:db8::1', '3fff::1',
];
const POLICY_ACCEPTS = ['93.184.216.34', '2606:4700::1111', '1.1.1.1'];
const hostOf = (a: string) => (a.includes(':') ? `[${a}]` : a);

describe('Webhooks SSRF: one address policy at registration, connect and after resolution (issue 9 item 6)', () => {
  it.each(POLICY_REFUSES)('the policy refuses %s', (a) => {
    expect(isPublicAddress(a)).toBe(false);
    expect(isPublicAddress(`[${a}]`)).toBe(false);
  });

  it.each(POLICY_ACCEPTS)('the policy accepts %s', (a) => {
    expect(isPublicAddress(a)).toBe(true);
  });

  it('the registration check and the delivery check agree on every row', () => {
    for (const a of [...POLICY_REFUSES, ...POLICY_ACCEPTS]) {
      const delivery = isPublicAddress(a);
      expect(isForbiddenHostLiteral(a), a).toBe(!delivery);
      expect(isForbiddenHostLiteral(hostOf(a)), a).toBe(!delivery);
      // A zone id cannot be written in a URL (WHATWG): the URL is refused as invalid instead.
      const problem = webhookUrlProblem(`https://${hostOf(a)}/x`);
      if (delivery) expect(problem, a).toBeNull();
      else expect(problem?.code, a).toBe(a.includes('%') ? 'invalid_url' : 'private_address');
    }
  });

  it('the sender refuses every refused row, as an IP literal (connector) and through a name (lookup), without connecting', async () => {
    const names = new Map(POLICY_REFUSES.map((a, i) => [`row${i}.invalid`, a]));
    const lookup: HostLookup = async (h) => {
      const a = names.get(h);
      return a === undefined ? [] : [{ address: a, family: a.includes(':') ? 6 : 4 }];
    };
    const strict = createWebhookSender({ lookup, timeoutMs: 2_000 });
    try {
      for (const [name, a] of names) {
        // Guard: the sender applies this same function before any socket opens, so a row
        // reaches the sender only once it is known to be refused (no test connects out).
        expect(isPublicAddress(a), a).toBe(false);
        if (!a.includes('%')) {
          const literal = await strict(req(`https://${hostOf(a)}/in`));
          expect(literal, a).toMatchObject({ ok: false, status: null, error: REFUSED });
        }
        const named = await strict(req(`https://${name}/in`));
        expect(named, a).toMatchObject({ ok: false, status: null, error: REFUSED });
      }
    } finally {
      await strict.close();
    }
  });

  it('a refused delivery reads exactly "target refused: not a public address" and never names the address or the host', async () => {
    const lookup: HostLookup = async (h) =>
      h === 'private.invalid' ? [{ address: '10.0.0.1', family: 4 }] : h === 'compat.invalid' ? [{ address: '::7f00:1', family: 6 }] : [];
    // The policy refuses both before any connection is attempted.
    expect(isPublicAddress('10.0.0.1')).toBe(false);
    expect(isPublicAddress('::7f00:1')).toBe(false);
    const strict = createWebhookSender({ lookup, timeoutMs: 2_000 });
    try {
      for (const [url, hidden] of [
        ['https://private.invalid/in', ['10.0.0.1', 'private.invalid']],
        ['https://compat.invalid:8443/in', ['7f00', '127.0.0.1', 'compat.invalid']],
        ['https://10.0.0.1/in', ['10.0.0.1']],
        ['https://[::7f00:1]/in', ['7f00']],
      ] as const) {
        const r = await strict(req(url));
        expect(r, url).toMatchObject({ ok: false, status: null });
        expect(r.error, url).toBe('target refused: not a public address');
        for (const h of hidden) expect(r.error, url).not.toContain(h);
      }
    } finally {
      await strict.close();
    }
  });
});
