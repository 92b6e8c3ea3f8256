import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import {
  createLegacyRateLimiter, createRateLimiter, fakeClock, LEGACY_RATE_LIMITS, ProblemError,
  type LegacyRateLimiter, type LegacyRateLimiterOptions, type LegacyRateLimitBucket, type FakeClock,
} from '@pmapi/core';
import type { SqlStore } from '@pmapi/core/sql';
import { memoryRateLimitStore, type HttpResponse, type RateLimitStore } from '@pmapi/core';
import { harness, type Harness, type StoreFactory } from '../kit';
import { APP, codeFor, setup, token as asToken, type Setup } from './oauth';

const MIN = 60_000;

type Row = LegacyRateLimitBucket;
interface Rule { limit: number; windowMs: number; keyBy: 'token' | 'ip'; blockMs: number }

/**
 * Spec "Limits" → "Legacy rate limits" (oauth-and-legacy-v1), copied by hand
 * (not imported) so a wrong table fails: per row the per-token and the per-IP
 * bucket, with the block lengths the spec gives ("60 minutes after exhausting
 * the per-token GET or POST /messages bucket; 10 minutes after the other
 * per-token buckets; 10 minutes after the per-IP GET bucket; 60 minutes after
 * the other per-IP buckets").
 */
const SPEC: Record<Row, [Rule, Rule]> = {
  GET: [{ limit: 1000, windowMs: 5 * MIN, keyBy: 'token', blockMs: 60 * MIN }, { limit: 200, windowMs: MIN, keyBy: 'ip', blockMs: 10 * MIN }],
  POST: [{ limit: 50, windowMs: MIN, keyBy: 'token', blockMs: 10 * MIN }, { limit: 100, windowMs: MIN, keyBy: 'ip', blockMs: 60 * MIN }],
  PUT: [{ limit: 50, windowMs: MIN, keyBy: 'token', blockMs: 10 * MIN }, { limit: 100, windowMs: MIN, keyBy: 'ip', blockMs: 60 * MIN }],
  DELETE: [{ limit: 10, windowMs: MIN, keyBy: 'token', blockMs: 10 * MIN }, { limit: 200, windowMs: 10 * MIN, keyBy: 'ip', blockMs: 60 * MIN }],
  'POST /messages': [{ limit: 500, windowMs: 5 * MIN, keyBy: 'token', blockMs: 60 * MIN }, { limit: 100, windowMs: MIN, keyBy: 'ip', blockMs: 60 * MIN }],
};

/**
 * The same windows with small limits (the `limits` override, without
 * `blockMs`: the spec's block lengths stay). The per-IP limit is above the
 * per-token one, so one token trips its own bucket first and several tokens
 * from one address trip the address's.
 */
const SMALL: Record<Row, [{ limit: number; windowMs: number; keyBy: 'token' }, { limit: number; windowMs: number; keyBy: 'ip' }]> = {
  GET: [{ limit: 6, windowMs: 5 * MIN, keyBy: 'token' }, { limit: 9, windowMs: MIN, keyBy: 'ip' }],
  POST: [{ limit: 4, windowMs: MIN, keyBy: 'token' }, { limit: 7, windowMs: MIN, keyBy: 'ip' }],
  PUT: [{ limit: 5, windowMs: MIN, keyBy: 'token' }, { limit: 8, windowMs: MIN, keyBy: 'ip' }],
  DELETE: [{ limit: 3, windowMs: MIN, keyBy: 'token' }, { limit: 5, windowMs: 10 * MIN, keyBy: 'ip' }],
  'POST /messages': [{ limit: 5, windowMs: 5 * MIN, keyBy: 'token' }, { limit: 8, windowMs: MIN, keyBy: 'ip' }],
};

const ROWS = Object.keys(SPEC) as Row[];
/** A request of each row: method and a path (either form the pipeline may pass). */
const REQUEST: Record<Row, { method: string; path: string }> = {
  GET: { method: 'GET', path: '/api/v1.0/subteams' },
  POST: { method: 'POST', path: '/api/v1.0/labels' },
  PUT: { method: 'PUT', path: '/api/v1.0/labels/lbl_1' },
  DELETE: { method: 'DELETE', path: '/api/v1.0/labels/lbl_1' },
  'POST /messages': { method: 'POST', path: '/api/v1.0/messages' },
};

type Outcome = { ok: true; headers: Record<string, string> } | { ok: false; status: number; code: string; message: string; retryAfter: number; header: string | undefined; headers: Record<string, string> };

let seq = 0;
const uniq = (p: string) => `${p}-${++seq}-${Math.random().toString(36).slice(2, 8)}`;

interface Variant {
  label: string;
  make(store: SqlStore, o?: Omit<LegacyRateLimiterOptions, 'store' | 'sqlStore'>): LegacyRateLimiter;
}

const VARIANTS: Variant[] = [
  { label: 'memory store', make: (_s, o = {}) => createLegacyRateLimiter({ ...o, store: 'memory' }) },
  { label: 'database store', make: (s, o = {}) => createLegacyRateLimiter({ ...o, store: 'database', sqlStore: s }) },
];

/** Legacy v1.0 rate limits (spec "Limits" → "Legacy rate limits"; issue 15 "Rate limits"), the limiter driven directly with a fake clock. */
export function legacyLimitsSuite(factory: StoreFactory): void {
  describe(`[${factory.name}] Legacy v1.0 rate limits: the table`, () => {
    it('the library table is the spec table, block lengths included', () => {
      expect(JSON.parse(JSON.stringify(LEGACY_RATE_LIMITS))).toEqual(SPEC);
    });
  });

  for (const v of VARIANTS) {
    describe(`[${factory.name}] Legacy v1.0 rate limits (${v.label})`, () => {
      let store: SqlStore;
      let clock: FakeClock;
      let lim: LegacyRateLimiter;
      beforeAll(async () => {
        store = await factory.open();
        clock = fakeClock('2026-03-01T09:00:00.000Z');
        lim = v.make(store, { limits: SMALL });
      });
      afterAll(async () => {
        await store.close();
      });

      async function send(row: Row, tokenId: string, clientIp: string, l = lim, path = REQUEST[row].path, method = REQUEST[row].method): Promise<Outcome> {
        try {
          const headers = await l.check({ tokenId, method, path, clientIp, now: clock.now() });
          return { ok: true, headers };
        } catch (err) {
          if (!(err instanceof ProblemError)) throw err;
          return {
            ok: false, status: err.status, code: err.code, message: err.message, retryAfter: err.extras.retryAfter as number,
            header: err.headers['retry-after'], headers: err.headers,
          };
        }
      }
      function refused(o: Outcome): Extract<Outcome, { ok: false }> {
        expect(o.ok).toBe(false);
        return o as Extract<Outcome, { ok: false }>;
      }
      /** Start each test at the beginning of an hour, so fixed windows are whole. */
      function freshHour(): void {
        clock.set(Math.ceil((clock.now() + 1) / (60 * MIN)) * 60 * MIN + 24 * 60 * MIN);
      }

      for (const row of ROWS) {
        const [tok, ip] = SMALL[row];
        const [tokBlock, ipBlock] = [SPEC[row][0].blockMs, SPEC[row][1].blockMs];

        it(`${row}: the per-token bucket admits ${tok.limit}, refuses the next with 429 rate_limited and Retry-After = the ${tokBlock / MIN}-minute block; the block ends exactly then`, async () => {
          freshHour();
          const t = uniq('tok');
          const addr = uniq('ip');
          for (let i = 1; i <= tok.limit; i++) {
            const o = await send(row, t, addr);
            expect(o.ok, `request ${i}`).toBe(true);
          }
          const over = refused(await send(row, t, addr));
          expect(over.status).toBe(429);
          expect(over.code).toBe('rate_limited');
          expect(over.retryAfter).toBe(tokBlock / 1000);
          expect(over.header).toBe(String(tokBlock / 1000));
          // 429s carry no X-RateLimit-* (docs/not-shown.md, "Legacy rate limits …").
          expect(Object.keys(over.headers).filter((k) => k.startsWith('x-ratelimit'))).toEqual([]);
          // The address is not blocked: another token from it passes.
          expect((await send(row, uniq('tok'), addr)).ok).toBe(true);
          // Retry-After is the remaining block; retries neither shorten nor extend it.
          clock.advance(tokBlock / 2);
          expect(refused(await send(row, t, addr)).retryAfter).toBe(tokBlock / 2000);
          clock.advance(tokBlock / 2 - 1_500);
          for (let i = 0; i < 3; i++) expect(refused(await send(row, t, addr)).retryAfter).toBe(2);
          clock.advance(500);
          expect(refused(await send(row, t, addr)).header).toBe('1');
          clock.advance(999);
          expect(refused(await send(row, t, addr)).retryAfter).toBe(1);
          clock.advance(1);
          // Exactly the block length after the trip: admitted again, a fresh window.
          expect((await send(row, t, addr)).ok).toBe(true);
        });

        it(`${row}: the per-IP bucket is shared by every token from one address — request ${ip.limit + 1} is refused for the ${ipBlock / MIN}-minute block; another address is not`, async () => {
          freshHour();
          const addr = uniq('ip');
          const tokens = Array.from({ length: ip.limit + 2 }, () => uniq('tok'));
          // One request per token: no token bucket comes near its limit.
          for (let i = 0; i < ip.limit; i++) expect((await send(row, tokens[i]!, addr)).ok, `request ${i + 1}`).toBe(true);
          const over = refused(await send(row, tokens[ip.limit]!, addr));
          expect(over.status).toBe(429);
          expect(over.retryAfter).toBe(ipBlock / 1000);
          // Both must pass: a token far below its own limit is refused from this address...
          expect(refused(await send(row, tokens[ip.limit + 1]!, addr)).retryAfter).toBe(ipBlock / 1000);
          // ...and admitted from another one.
          expect((await send(row, tokens[0]!, uniq('ip'))).ok).toBe(true);
          clock.advance(ipBlock - 1000);
          expect(refused(await send(row, tokens[1]!, addr)).retryAfter).toBe(1);
          clock.advance(1000);
          expect((await send(row, tokens[1]!, addr)).ok).toBe(true);
        });
      }

      it('the per-token bucket follows the token across addresses; a refused request counts in no bucket', async () => {
        freshHour();
        const t = uniq('tok');
        const [tok] = SMALL.POST;
        for (let i = 0; i < tok.limit; i++) expect((await send('POST', t, uniq('ip'))).ok).toBe(true);
        const addr = uniq('ip');
        expect(refused(await send('POST', t, addr)).retryAfter).toBe(SPEC.POST[0].blockMs / 1000);
        // The refused request was not counted at `addr`: its IP bucket still admits its full limit.
        for (let i = 0; i < SMALL.POST[1].limit; i++) expect((await send('POST', uniq('tok'), addr)).ok, `request ${i + 1}`).toBe(true);
        expect(refused(await send('POST', uniq('tok'), addr)).retryAfter).toBe(SPEC.POST[1].blockMs / 1000);
      });

      it('POST /messages has buckets of its own: exhausting POST leaves it open, and the other way round', async () => {
        freshHour();
        const t = uniq('tok');
        const addr = uniq('ip');
        for (let i = 0; i < SMALL.POST[0].limit; i++) expect((await send('POST', t, addr)).ok).toBe(true);
        expect((await send('POST', t, addr)).ok).toBe(false);
        for (let i = 0; i < SMALL['POST /messages'][0].limit; i++) expect((await send('POST /messages', t, addr)).ok, `message ${i + 1}`).toBe(true);
        expect(refused(await send('POST /messages', t, addr)).retryAfter).toBe(60 * 60);
        // The other methods were never touched.
        expect((await send('PUT', t, addr)).ok).toBe(true);
        expect((await send('GET', t, addr)).ok).toBe(true);
        // A second token: messages first, then POST still admits its whole bucket.
        const t2 = uniq('tok');
        const addr2 = uniq('ip');
        for (let i = 0; i < SMALL['POST /messages'][0].limit; i++) expect((await send('POST /messages', t2, addr2)).ok).toBe(true);
        expect((await send('POST /messages', t2, addr2)).ok).toBe(false);
        for (let i = 0; i < SMALL.POST[0].limit; i++) expect((await send('POST', t2, addr2)).ok).toBe(true);
      });

      it('which row a request counts in: the messages segment with or without /api/v1.0 and below it; HEAD is GET; PATCH and OPTIONS are not limited', async () => {
        freshHour();
        const t = uniq('tok');
        const addr = uniq('ip');
        const paths = ['/api/v1.0/messages', '/messages', '/api/v1.0/messages/msg_1/seen', '/api/v1.0/messages?x=1', 'messages'];
        for (const p of paths) expect((await send('POST /messages', t, addr, lim, p)).ok).toBe(true);
        // Five counted in POST /messages (limit 5): the sixth is refused, while POST elsewhere still passes.
        expect((await send('POST /messages', t, addr, lim, '/api/v1.0/messages')).ok).toBe(false);
        expect((await send('POST', t, addr, lim, '/api/v1.0/chats/c_1/messages')).ok).toBe(true);
        const t2 = uniq('tok');
        for (let i = 0; i < SMALL.GET[0].limit; i++) expect((await send('GET', t2, addr, lim, '/api/v1.0/tasks', i % 2 ? 'GET' : 'HEAD')).ok).toBe(true);
        expect((await send('GET', t2, addr, lim, '/api/v1.0/tasks', 'HEAD')).ok).toBe(false);
        for (let i = 0; i < 30; i++) expect(await send('GET', t2, addr, lim, '/api/v1.0/tasks', i % 2 ? 'PATCH' : 'OPTIONS')).toEqual({ ok: true, headers: {} });
      });

      it('admitted requests get the X-RateLimit-* headers of the most constrained bucket', async () => {
        freshHour();
        const t = uniq('tok');
        const addr = uniq('ip');
        // DELETE: token 3 per minute, IP 5 per 10 minutes. The token bucket is tighter throughout.
        const first = await send('DELETE', t, addr);
        expect(first).toEqual({ ok: true, headers: { 'x-ratelimit-limit': '3', 'x-ratelimit-remaining': '2', 'x-ratelimit-reset': '60' } });
        clock.advance(15_000);
        expect((await send('DELETE', t, addr)).headers).toEqual({ 'x-ratelimit-limit': '3', 'x-ratelimit-remaining': '1', 'x-ratelimit-reset': '45' });
        // Other tokens use up the address: now the IP bucket is the tighter one.
        await send('DELETE', uniq('tok'), addr);
        await send('DELETE', uniq('tok'), addr);
        expect((await send('DELETE', uniq('tok'), addr)).headers).toEqual({ 'x-ratelimit-limit': '5', 'x-ratelimit-remaining': '0', 'x-ratelimit-reset': '585' });
      });

      it('a block is never announced longer than itself, and ends for good: afterwards the key starts a fresh window', async () => {
        freshHour();
        const t = uniq('tok');
        const addr = uniq('ip');
        const [tok] = SMALL.GET;
        for (let i = 0; i < tok.limit; i++) await send('GET', t, addr);
        const trippedAt = clock.now();
        expect(refused(await send('GET', t, addr)).retryAfter).toBe(3600);
        // Hammering through the whole block: every answer names the block's own end.
        for (let at = 0; at < 60 * MIN; at += 7 * MIN) {
          clock.set(trippedAt + at);
          expect(refused(await send('GET', t, addr)).retryAfter).toBe(Math.ceil((60 * MIN - at) / 1000));
        }
        clock.set(trippedAt + 60 * MIN);
        for (let i = 0; i < tok.limit; i++) expect((await send('GET', t, addr)).ok, `request ${i + 1} after the block`).toBe(true);
        expect((await send('GET', t, addr)).ok).toBe(false);
      });

      it('two limiters over one store enforce one limit (processes sharing a database; memory: one process)', async () => {
        freshHour();
        const other = v.label === 'database store' ? v.make(store, { limits: SMALL }) : lim;
        const t = uniq('tok');
        const addr = uniq('ip');
        for (let i = 0; i < SMALL.PUT[0].limit; i++) expect((await send('PUT', t, addr, i % 2 ? lim : other)).ok).toBe(true);
        expect(refused(await send('PUT', t, addr, other)).retryAfter).toBe(600);
        expect(refused(await send('PUT', t, addr, lim)).retryAfter).toBe(600);
      });

      it('the spec limits as shipped: the 11th DELETE of a token in a minute is refused for 10 minutes, the 201st GET of an address for 10 minutes', async () => {
        freshHour();
        const spec = v.make(store);
        const t = uniq('tok');
        const addr = uniq('ip');
        for (let i = 0; i < 10; i++) expect((await send('DELETE', t, addr, spec)).ok).toBe(true);
        expect(refused(await send('DELETE', t, addr, spec)).retryAfter).toBe(600);
        const addr2 = uniq('ip');
        for (let i = 0; i < 200; i++) expect((await send('GET', `${t}-${i % 40}`, addr2, spec)).ok).toBe(true);
        expect(refused(await send('GET', uniq('tok'), addr2, spec)).retryAfter).toBe(600);
      });

      if (v.label === 'database store') {
        it('keys never meet v3 keys in a shared store: v3 and legacy buckets of one token and address are separate', async () => {
          freshHour();
          const v3 = createRateLimiter({ store: 'database', sqlStore: store, limits: { DELETE: [{ limit: 2, windowMs: MIN, keyBy: 'token' }, { limit: 2, windowMs: MIN, keyBy: 'ip' }] } });
          const t = uniq('tok');
          const addr = uniq('ip');
          await v3.check({ tokenId: t, method: 'DELETE', clientIp: addr, now: clock.now() });
          await v3.check({ tokenId: t, method: 'DELETE', clientIp: addr, now: clock.now() });
          await expect(v3.check({ tokenId: t, method: 'DELETE', clientIp: addr, now: clock.now() })).rejects.toMatchObject({ code: 'rate_limited' });
          for (let i = 0; i < SMALL.DELETE[0].limit; i++) expect((await send('DELETE', t, addr)).ok).toBe(true);
          expect((await send('DELETE', t, addr)).ok).toBe(false);
        });

        it('sweep forgets counters once they can no longer count, and ended blocks', async () => {
          freshHour();
          const t = uniq('tok');
          for (let i = 0; i <= SMALL.DELETE[0].limit; i++) await send('DELETE', t, uniq('ip'));
          clock.advance(3 * 60 * MIN);
          expect(await lim.sweep!(clock.now())).toBeGreaterThan(0);
          expect(await lim.sweep!(clock.now())).toBe(0);
        });
      }
    });
  }

  legacyOverHttpSuite(factory);
  apiHostTokenSuite(factory);
}

/** The limiter in the legacy pipeline (between authentication and the operation), through `api.handle`. */
function legacyOverHttpSuite(factory: StoreFactory): void {
  for (const kind of ['memory', 'database'] as const) {
    describe(`[${factory.name}] Legacy v1.0 rate limits through api.handle (${kind} store)`, () => {
      let h: Harness;
      beforeAll(async () => {
        h = await harness(factory, {
          api: (_clock, store) => ({
            legacyRateLimiter: createLegacyRateLimiter({
              store: kind, sqlStore: store,
              limits: { GET: [{ limit: 3, windowMs: 5 * MIN, keyBy: 'token' }, { limit: 5, windowMs: MIN, keyBy: 'ip' }] },
            }),
          }),
        });
      });
      afterAll(async () => { await h.close(); });
      const get = async (token: string | null, ip = '203.0.113.60') => parse(await h.api.handle({
        method: 'GET', url: '/api/v1.0/subteams', headers: token === null ? {} : { authorization: `Bearer ${token}` }, remoteAddress: ip,
      }));

      it('admitted answers carry X-RateLimit-*; over the limit: 429 {message, code: 429}, Retry-After = the remaining block, the legacy headers, no X-RateLimit-*', async () => {
        h.clock.set('2026-03-03T09:00:00.000Z');
        // Requests without a valid token are answered 401 before limiting and use no bucket.
        for (let i = 0; i < 6; i++) expect((await get(null)).status).toBe(401);
        for (let i = 0; i < 3; i++) {
          const r = await get(h.a.owner.token);
          expect(r.status).toBe(200);
          expect(r.headers['x-ratelimit-limit']).toBe('3');
          expect(r.headers['x-ratelimit-remaining']).toBe(String(2 - i));
        }
        const over = await get(h.a.owner.token);
        expect(over.status).toBe(429);
        expect(over.body).toEqual({ message: expect.any(String), code: 429 });
        expect(over.headers['retry-after']).toBe('3600');
        expect(over.headers.deprecation).toBe('true');
        expect(Object.keys(over.headers).filter((k) => k.startsWith('x-ratelimit'))).toEqual([]);
        // The v3 surface is not affected (its own limiter, off in this harness).
        expect((await h.get('/tasks')).status).toBe(200);
        // Per IP: two more tokens from the address fill its bucket (5 a minute: 3 + 2), the next is refused for 10 minutes.
        expect((await get(h.a.regular.token)).status).toBe(200);
        expect((await get(h.a.client.token)).status).toBe(200);
        const ipOver = await get(h.b.owner.token);
        expect(ipOver.status).toBe(429);
        expect(ipOver.headers['retry-after']).toBe('600');
        expect((await get(h.b.owner.token, '203.0.113.61')).status).toBe(200);
        // 20 minutes later the address is free again; the token's hour-long block has 40 minutes left.
        h.clock.advance(20 * MIN);
        expect((await get(h.b.owner.token)).status).toBe(200);
        const still = await get(h.a.owner.token);
        expect(still.status).toBe(429);
        expect(still.headers['retry-after']).toBe(String(40 * 60));
        h.clock.advance(40 * MIN);
        expect((await get(h.a.owner.token)).status).toBe(200);
      });
    });
  }
}

const HOUR = 60 * MIN;

function parse(res: HttpResponse): { status: number; headers: Record<string, string>; body: any } {
  return { status: res.status, headers: res.headers, body: res.body === undefined ? undefined : JSON.parse(typeof res.body === 'string' ? res.body : new TextDecoder().decode(res.body)) };
}

/** A raw request to the API host's token endpoint, `POST {base_url}/oauth/token`, through `api.handle`. */
async function apiToken(h: Harness, form: Record<string, string> | string, o: { headers?: Record<string, string>; ip?: string; method?: string } = {}) {
  return parse(await h.api.handle({
    method: o.method ?? 'POST', url: '/oauth/token', remoteAddress: o.ip ?? '198.51.100.7',
    headers: { 'content-type': 'application/x-www-form-urlencoded', ...(o.headers ?? {}) },
    body: typeof form === 'string' ? form : new URLSearchParams(form).toString(),
  }));
}

/** The same request to the authorization server's token endpoint, through `api.oauth.handle`. */
async function asRaw(h: Harness, form: Record<string, string> | string, o: { headers?: Record<string, string>; ip?: string; method?: string } = {}) {
  return parse(await h.api.oauth!.handle({
    method: o.method ?? 'POST', url: '/oauth/token', remoteAddress: o.ip ?? '198.51.100.7',
    headers: { 'content-type': 'application/x-www-form-urlencoded', ...(o.headers ?? {}) },
    body: typeof form === 'string' ? form : new URLSearchParams(form).toString(),
  }));
}

/** What a token answer is judged by: status, body and the headers a client reads. */
function visible(r: { status: number; headers: Record<string, string>; body: any }) {
  const pick = ['content-type', 'cache-control', 'pragma', 'www-authenticate', 'allow', 'retry-after'];
  return { status: r.status, body: r.body, headers: Object.fromEntries(pick.filter((k) => r.headers[k] !== undefined).map((k) => [k, r.headers[k]])) };
}

interface TokenVariant {
  label: string;
  tokenRateLimit?: (store: SqlStore) => RateLimitStore;
}

/** The token endpoint on the API host (spec "Limits", "Errors"; issue 15 "The token endpoint on the API host"). */
function apiHostTokenSuite(factory: StoreFactory): void {
  describe(`[${factory.name}] OAuth token endpoint on the API host: the same grants as the authorization server's`, () => {
    let s: Setup;
    beforeAll(async () => { s = await setup(factory); });
    afterAll(async () => { await s.h.close(); });

    it('every malformed or refused request is answered exactly as at the authorization server (status, body, headers)', async () => {
      const { h, pub, conf } = s;
      const verifier = 'v'.repeat(43);
      const cases: Array<{ form: Record<string, string> | string; o?: { headers?: Record<string, string>; method?: string }; expect: number }> = [
        { form: {}, o: { method: 'GET' }, expect: 405 },
        { form: { grant_type: 'refresh_token', refresh_token: 'x', client_id: pub.clientId }, o: { headers: { 'content-type': 'application/json' } }, expect: 400 },
        { form: { client_id: pub.clientId }, expect: 400 },
        { form: { grant_type: 'password', username: 'a', password: 'b', client_id: pub.clientId }, expect: 400 },
        { form: { grant_type: 'refresh_token', refresh_token: 'x', client_id: 'cli_unknown' }, expect: 401 },
        { form: { grant_type: 'refresh_token', refresh_token: 'x', client_id: conf.clientId }, expect: 401 },
        { form: { grant_type: 'refresh_token', refresh_token: 'x', client_id: conf.clientId, client_secret: 'wrong' }, expect: 401 },
        { form: { grant_type: 'refresh_token', refresh_token: 'x', client_id: pub.clientId, client_secret: 'any' }, expect: 401 },
        { form: { grant_type: 'refresh_token', refresh_token: 'x', client_id: pub.clientId }, o: { headers: { authorization: 'Basic eDp5' } }, expect: 401 },
        { form: { grant_type: 'refresh_token', refresh_token: 'nope', client_id: pub.clientId }, expect: 400 },
        { form: { grant_type: 'authorization_code', code: 'nope', redirect_uri: APP, client_id: pub.clientId, code_verifier: verifier }, expect: 400 },
        { form: { grant_type: 'authorization_code', code: 'nope', redirect_uri: APP, client_id: pub.clientId, code_verifier: 'short' }, expect: 400 },
        { form: { grant_type: 'authorization_code', code: 'nope', redirect_uri: APP, client_id: pub.clientId }, expect: 400 },
        { form: `grant_type=refresh_token&grant_type=refresh_token&refresh_token=x&client_id=${pub.clientId}`, expect: 400 },
      ];
      for (const c of cases) {
        const atApi = visible(await apiToken(h, c.form, c.o));
        const atAs = visible(await asRaw(h, c.form, c.o));
        expect(atApi.status, JSON.stringify(c.form)).toBe(c.expect);
        expect(atApi, JSON.stringify(c.form)).toEqual(atAs);
      }
    });

    it('authorization_code and refresh_token: tokens of the same shape, usable on v3; single use and family revocation hold across both endpoints', async () => {
      const { h, pub } = s;
      const { code, verifier } = await codeFor(s, h.a.regular.id, 'read write');
      const got = await apiToken(h, { grant_type: 'authorization_code', code, redirect_uri: APP, client_id: pub.clientId, code_verifier: verifier });
      expect(got.status).toBe(200);
      expect(got.headers['cache-control']).toBe('no-store');
      expect(Object.keys(got.body).sort()).toEqual(['access_token', 'expires_in', 'refresh_token', 'scope', 'token_type']);
      expect(got.body).toMatchObject({ token_type: 'Bearer', expires_in: 3600, scope: 'read write' });
      expect(got.body.access_token).toMatch(/^svc_oauth_[0-9A-Za-z]{12}_[0-9A-Za-z]{40}$/);
      expect((await h.get('/tasks', { token: got.body.access_token })).status).toBe(200);
      // The AS's answer to a code of the same kind has the same shape.
      const other = await codeFor(s, h.a.regular.id, 'read write');
      const atAs = await asToken(h, { grant_type: 'authorization_code', code: other.code, redirect_uri: APP, client_id: pub.clientId, code_verifier: other.verifier });
      expect(Object.keys(atAs.body).sort()).toEqual(Object.keys(got.body).sort());
      // The code was spent at the API host: redeeming it again at the AS is invalid_grant and revokes what it issued.
      const again = await asToken(h, { grant_type: 'authorization_code', code, redirect_uri: APP, client_id: pub.clientId, code_verifier: verifier });
      expect(again.status).toBe(400);
      expect(again.body.error).toBe('invalid_grant');
      expect((await h.get('/tasks', { token: got.body.access_token })).status).toBe(401);
      // Refresh at the API host rotates; a replay there revokes the family, as at the AS.
      const r1 = await apiToken(h, { grant_type: 'refresh_token', refresh_token: atAs.body.refresh_token, client_id: pub.clientId });
      expect(r1.status).toBe(200);
      expect(r1.body.refresh_token).not.toBe(atAs.body.refresh_token);
      expect((await h.get('/tasks', { token: r1.body.access_token })).status).toBe(200);
      const narrowed = await asToken(h, { grant_type: 'refresh_token', refresh_token: r1.body.refresh_token, client_id: pub.clientId, scope: 'tasks:read' });
      expect(narrowed.status).toBe(200);
      expect(narrowed.body.scope).toBe('read');
      const replay = await apiToken(h, { grant_type: 'refresh_token', refresh_token: r1.body.refresh_token, client_id: pub.clientId });
      expect(replay.status).toBe(400);
      expect(replay.body.error).toBe('invalid_grant');
      expect((await h.get('/tasks', { token: narrowed.body.access_token })).status).toBe(401);
    });

    it('confidential clients use client_secret_post; an expired code (60 s) is invalid_grant', async () => {
      const { h, conf } = s;
      const { code, verifier } = await codeFor(s, h.a.owner.id, 'tasks:read', conf.clientId);
      const got = await apiToken(h, { grant_type: 'authorization_code', code, redirect_uri: APP, client_id: conf.clientId, client_secret: conf.clientSecret, code_verifier: verifier });
      expect(got.status).toBe(200);
      expect(got.body.scope).toBe('read');
      expect((await h.get('/projects', { token: got.body.access_token })).status).toBe(403);
      const late = await codeFor(s, h.a.owner.id, 'tasks:read', conf.clientId);
      h.clock.advance(61_000);
      const expired = await apiToken(h, { grant_type: 'authorization_code', code: late.code, redirect_uri: APP, client_id: conf.clientId, client_secret: conf.clientSecret, code_verifier: late.verifier });
      expect(expired.status).toBe(400);
      expect(expired.body.error).toBe('invalid_grant');
    });

    it('without the authorization server mounted, the API serves no /oauth/token', async () => {
      const h = await harness(factory);
      try {
        const r = await apiToken(h, { grant_type: 'refresh_token', refresh_token: 'x', client_id: 'c' });
        expect(r.status).toBe(404);
      } finally {
        await h.close();
      }
    });
  });

  const variants: TokenVariant[] = [
    // What ships: memory on SQLite, the database on Postgres.
    { label: 'default counters' },
    // The other store: the database's counters on SQLite (its side file), memory on Postgres.
    { label: 'the other store', tokenRateLimit: (store) => (store.dialect.capabilities.multiProcess ? memoryRateLimitStore() : store.rateLimitStore!()) },
  ];
  for (const v of variants) {
    describe(`[${factory.name}] OAuth token endpoint on the API host: 120 per minute and 1,000 per hour per IP (${v.label})`, () => {
      let s: Setup;
      beforeAll(async () => { s = await setup(factory, { rateLimited: true, ...(v.tokenRateLimit ? { tokenRateLimit: v.tokenRateLimit } : {}) }); });
      afterAll(async () => { await s.h.close(); });
      // A request refused before any grant work (grant_type missing): 400 while admitted.
      const form = { client_id: 'anyone' };

      it('120 within a minute pass, the 121st is 429 {error: rate_limited, error_description, retryAfter} with Retry-After; no block: admitted again once the window allows', async () => {
        const { h } = s;
        h.clock.set('2026-03-02T09:00:00.000Z');
        for (let i = 0; i < 120; i++) {
          const r = await apiToken(h, form, { ip: '203.0.113.20', headers: { 'x-forwarded-for': `10.0.0.${i % 250}` } });
          expect(r.status, `request ${i + 1}`).toBe(400);
        }
        const over = await apiToken(h, form, { ip: '203.0.113.20', headers: { 'x-forwarded-for': '10.9.9.9' } });
        expect(over.status).toBe(429);
        expect(over.body).toEqual({ error: 'rate_limited', error_description: expect.any(String), retryAfter: expect.any(Number) });
        expect(over.headers['retry-after']).toBe(String(over.body.retryAfter));
        expect(over.headers['cache-control']).toBe('no-store');
        // Until the minute's window ends and the sliding estimate has room (60 s + 60/120 s, rounded up).
        expect(over.body.retryAfter).toBe(61);
        // Another address is not affected; the authorization server's endpoint counts apart.
        expect((await apiToken(h, form, { ip: '203.0.113.21' })).status).toBe(400);
        expect((await asRaw(h, form, { ip: '203.0.113.20' })).status).toBe(400);
        // No block period: a refused request counted nowhere, and Retry-After later the address is admitted.
        h.clock.advance(30_000);
        expect((await apiToken(h, form, { ip: '203.0.113.20' })).status).toBe(429);
        h.clock.advance(31_000);
        expect((await apiToken(h, form, { ip: '203.0.113.20' })).status).toBe(400);
      });

      it('1,000 within an hour pass (at 100 a minute), the 1,001st is 429 until the hour has room; the authorization server\'s endpoint allows 120 a minute only', async () => {
        const { h } = s;
        h.clock.set('2026-03-02T10:00:00.000Z');
        const ip = '203.0.113.30';
        for (let i = 0; i < 1000; i++) {
          const r = await apiToken(h, form, { ip });
          if (r.status !== 400) expect(r.status, `request ${i + 1}`).toBe(400);
          h.clock.advance(600);
        }
        // 10:10:00: the minute bucket has room, the hour's does not.
        const over = await apiToken(h, form, { ip });
        expect(over.status).toBe(429);
        expect(over.body).toEqual({ error: 'rate_limited', error_description: expect.any(String), retryAfter: expect.any(Number) });
        expect(over.headers['retry-after']).toBe(String(over.body.retryAfter));
        // The hour's window ends at 11:00:00; 3.6 s later (an hour / 1,000) the sliding estimate has room: 50 min 4 s.
        expect(over.body.retryAfter).toBe(50 * 60 + 4);
        h.clock.advance(49 * MIN);
        expect((await apiToken(h, form, { ip })).status).toBe(429);
        h.clock.advance(MIN + 4_000);
        expect((await apiToken(h, form, { ip })).status).toBe(400);

        // The same traffic at the authorization server's endpoint: 1,200 in twelve minutes, all admitted.
        h.clock.set('2026-03-02T12:00:00.000Z');
        for (let i = 0; i < 1200; i++) {
          const r = await asRaw(h, form, { ip });
          if (r.status !== 400) expect(r.status, `AS request ${i + 1}`).toBe(400);
          h.clock.advance(600);
        }
      });

      it('sweeps of a shared store keep the hourly counters while they count (the v3 and legacy limiters sweep the database counters)', async () => {
        const { h } = s;
        h.clock.set('2026-03-02T14:00:00.000Z');
        const ip = '203.0.113.40';
        for (let i = 0; i < 1000; i++) {
          await apiToken(h, form, { ip });
          h.clock.advance(600);
        }
        h.clock.advance(40 * MIN);
        // 14:50: what api.jobs.purge() runs when limits are on, over the database's counters.
        await createRateLimiter({ store: 'database', sqlStore: h.store }).sweep!(h.clock.now());
        await createLegacyRateLimiter({ store: 'database', sqlStore: h.store }).sweep!(h.clock.now());
        await h.api.jobs.purge();
        expect((await apiToken(h, form, { ip })).status).toBe(429);
      });
    });
  }

  describe(`[${factory.name}] OAuth token endpoint on the API host: tokenRateLimit: false`, () => {
    it('turns the API host\'s limits off too', async () => {
      const s = await setup(factory);
      try {
        for (let i = 0; i < 130; i++) expect((await apiToken(s.h, { client_id: 'x' }, { ip: '203.0.113.50' })).status).toBe(400);
      } finally {
        await s.h.close();
      }
    });
  });
}
