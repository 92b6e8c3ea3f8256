import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { createRateLimiter, sqlRateLimitStore, V3_RATE_LIMITS, type HttpResponse, type PmapiOptions, type RateLimitStore, type RateLimitTable } from '@pmapi/core';
import type { SqlStore } from '@pmapi/core/sql';
import type { FakeClock } from '@pmapi/core';
import { harness, type Harness, type StoreFactory } from '../kit';

const MIN = 60_000;
const HOUR = 60 * MIN;
const ALL = ['read', 'write', 'delete'];

type Method = 'GET' | 'POST' | 'PATCH' | 'DELETE';
interface Rule { limit: number; windowMs: number; keyBy: 'token' | 'ip' }
type Table = Record<Method, [Rule, Rule]>;

/** Spec "Limits" → "v3 rate limits", copied here by hand (not imported) so a wrong table fails. */
const SPEC: Table = {
  GET: [{ limit: 3000, windowMs: 5 * MIN, keyBy: 'token' }, { limit: 3000, windowMs: 5 * MIN, keyBy: 'token' }],
  POST: [{ limit: 500, windowMs: MIN, keyBy: 'token' }, { limit: 200, windowMs: MIN, keyBy: 'token' }],
  PATCH: [{ limit: 100, windowMs: MIN, keyBy: 'token' }, { limit: 200, windowMs: MIN, keyBy: 'token' }],
  DELETE: [{ limit: 200, windowMs: 10 * MIN, keyBy: 'token' }, { limit: 200, windowMs: 10 * MIN, keyBy: 'ip' }],
};

/** The same shape scaled down, for the second store (every rule still exercised). */
const SMALL: Table = {
  GET: [{ limit: 30, windowMs: 5 * MIN, keyBy: 'token' }, { limit: 30, windowMs: 5 * MIN, keyBy: 'token' }],
  POST: [{ limit: 25, windowMs: MIN, keyBy: 'token' }, { limit: 10, windowMs: MIN, keyBy: 'token' }],
  PATCH: [{ limit: 10, windowMs: MIN, keyBy: 'token' }, { limit: 20, windowMs: MIN, keyBy: 'token' }],
  DELETE: [{ limit: 20, windowMs: 10 * MIN, keyBy: 'token' }, { limit: 20, windowMs: 10 * MIN, keyBy: 'ip' }],
};

/** Blocks last twice the window (docs/not-shown.md "Rate limits"). */
const blockSeconds = (r: Rule) => (2 * r.windowMs) / 1000;

interface Reply { status: number; headers: Record<string, string>; body: any }

interface Variant {
  label: string;
  table: Table;
  api: (clock: FakeClock, store: SqlStore) => Partial<PmapiOptions>;
}

const variants: Variant[] = [
  // What ships: createPmapi's default limiter (memory on SQLite, the database on Postgres).
  { label: 'default limiter, the v3 table', table: SPEC, api: () => ({ rateLimiter: undefined }) },
  // The other store with a scaled table: the database store on SQLite, the memory store on Postgres.
  {
    label: 'the other store, a scaled table',
    table: SMALL,
    api: (_clock, store) => ({
      rateLimiter: createRateLimiter({
        store: store.dialect.capabilities.multiProcess ? 'memory' : 'database', sqlStore: store, limits: SMALL as RateLimitTable,
      }),
    }),
  },
];

/** Rate limits (spec "Limits" → "v3 rate limits"; issue 4 "Rate limits"). */
export function rateLimitsSuite(factory: StoreFactory): void {
  for (const v of variants) {
    describe(`[${factory.name}] Limits: v3 rate limits (${v.label})`, () => {
      let h: Harness;
      beforeAll(async () => {
        h = await harness(factory, { api: v.api });
      });
      afterAll(() => h.close());

      async function call(method: string, path: string, o: { token?: string | null; ip?: string | null; body?: unknown } = {}): Promise<Reply> {
        const headers: Record<string, string> = {};
        if (o.token !== null) headers.authorization = `Bearer ${o.token ?? h.a.owner.token}`;
        let body: string | undefined;
        if (o.body !== undefined) {
          body = JSON.stringify(o.body);
          headers['content-type'] = 'application/json';
        }
        const res = await h.api.handle({ method, url: `/api/v3${path}`, headers, body, ...(o.ip === null ? {} : { remoteAddress: o.ip ?? '10.0.0.1' }) });
        return { status: res.status, headers: res.headers, body: res.body === undefined ? undefined : JSON.parse(typeof res.body === 'string' ? res.body : new TextDecoder().decode(res.body)) };
      }

      /** A cheap request of each method (a 4xx outcome still counts as a request). */
      let labelN = 0;
      const send = (m: Method, token: string, ip?: string | null): Promise<Reply> => {
        switch (m) {
          case 'GET': return call('GET', '/members?limit=1', { token, ip });
          case 'POST': return call('POST', '/labels', { token, ip, body: { name: `Limit ${++labelN}` } });
          case 'PATCH': return call('PATCH', '/labels/nosuchlabel', { token, ip, body: { name: 'x' } });
          case 'DELETE': return call('DELETE', '/labels/nosuchlabel', { token, ip });
        }
      };
      /** `n` requests, in concurrent batches. */
      async function burst(n: number, fn: (i: number) => Promise<Reply>): Promise<Reply[]> {
        const out: Reply[] = [];
        for (let i = 0; i < n; i += 50) out.push(...(await Promise.all(Array.from({ length: Math.min(50, n - i) }, (_, j) => fn(i + j)))));
        return out;
      }
      /** Move to the start of the next hour (every earlier window and block is over) plus `offsetMs`; a new token. */
      async function fresh(offsetMs = 0): Promise<string> {
        h.clock.set(Math.floor(h.clock.now() / HOUR) * HOUR + HOUR + offsetMs);
        return (await h.api.admin.issueToken(h.a.owner.id, { scopes: ALL })).token;
      }
      const admitted = (r: Reply) => r.status !== 429;
      function expectRefused(r: Reply, retryAfter: number): void {
        expect(r.status).toBe(429);
        expect(r.headers['content-type']).toMatch(/json/);
        expect(r.body).toMatchObject({ status: 429, code: 'rate_limited', type: 'rate_limited', retryAfter });
        expect(r.headers['retry-after']).toBe(String(retryAfter));
        expect(r.body.retryAfter).toBe(Number(r.headers['retry-after']));
        for (const name of ['x-ratelimit-limit', 'x-ratelimit-remaining', 'x-ratelimit-reset']) expect(r.headers[name]).toBeUndefined();
      }
      function expectHeaders(r: Reply, limit: number, remaining: number, reset: number): void {
        expect(r.status).not.toBe(429);
        expect({ limit: r.headers['x-ratelimit-limit'], remaining: r.headers['x-ratelimit-remaining'], reset: r.headers['x-ratelimit-reset'] })
          .toEqual({ limit: String(limit), remaining: String(remaining), reset: String(reset) });
      }
      /** The bucket the headers report: the most constrained one (fewest left; ties: the smaller limit). */
      const tightest = (m: Method) => (v.table[m][1].limit < v.table[m][0].limit ? v.table[m][1] : v.table[m][0]);

      if (v.table === SPEC) {
        it('the library table is the spec table', () => {
          expect(V3_RATE_LIMITS).toEqual(SPEC);
        });
      }

      for (const m of ['GET', 'POST', 'PATCH', 'DELETE'] as const) {
        const rule = tightest(m);
        it(`${m}: request ${rule.limit} is admitted, ${rule.limit + 1} is refused (429 rate_limited, Retry-After = retryAfter), with exact X-RateLimit-* headers`, async () => {
          const token = await fresh(7_000);
          const W = rule.windowMs / 1000;
          const first = await send(m, token);
          expectHeaders(first, rule.limit, rule.limit - 1, W - 7);
          const middle = await burst(rule.limit - 2, () => send(m, token));
          expect(middle.filter(admitted)).toHaveLength(rule.limit - 2);
          h.clock.advance(2_000);
          const nth = await send(m, token);
          expectHeaders(nth, rule.limit, 0, W - 9);
          const over = await send(m, token);
          expectRefused(over, blockSeconds(rule));
          // The next one is refused too (the block), and other tokens are untouched.
          expectRefused(await send(m, token), blockSeconds(rule));
          expectHeaders(await send(m, await fresh(0)), rule.limit, rule.limit - 1, W);
        });
      }

      it('POST: the second bucket trips before the first (both must pass)', async () => {
        const [first, second] = v.table.POST;
        expect(second.limit).toBeLessThan(first.limit);
        const token = await fresh();
        const rs = await burst(second.limit + 5, () => send('POST', token));
        expect(rs.filter(admitted)).toHaveLength(second.limit);
        expect(rs.filter(admitted).every((r) => r.status === 201 && r.headers['x-ratelimit-limit'] === String(second.limit))).toBe(true);
      });

      it('PATCH: the first bucket trips before the second', async () => {
        const [first, second] = v.table.PATCH;
        expect(first.limit).toBeLessThan(second.limit);
        const token = await fresh();
        const rs = await burst(first.limit + 5, () => send('PATCH', token));
        expect(rs.filter(admitted)).toHaveLength(first.limit);
        expect(rs.filter(admitted).every((r) => r.headers['x-ratelimit-limit'] === String(first.limit))).toBe(true);
      });

      it("DELETE: the client-IP bucket is shared by every token from one IP, and not by another IP's", async () => {
        const [byToken, byIp] = v.table.DELETE;
        expect(byIp.keyBy).toBe('ip');
        const t1 = await fresh();
        const t2 = (await h.api.admin.issueToken(h.a.regular.id, { scopes: ALL })).token;
        const n1 = Math.floor((byIp.limit * 3) / 4);
        const n2 = byIp.limit - n1;
        expect((await burst(n1, () => send('DELETE', t1, '192.0.2.1'))).filter(admitted)).toHaveLength(n1);
        const second = await burst(n2 - 1, () => send('DELETE', t2, '192.0.2.1'));
        expect(second.filter(admitted)).toHaveLength(n2 - 1);
        // The IP bucket is the tightest now: t2's own bucket still has room.
        expectHeaders(await send('DELETE', t2, '192.0.2.1'), byIp.limit, 0, byIp.windowMs / 1000);
        expectRefused(await send('DELETE', t2, '192.0.2.1'), blockSeconds(byIp));
        expectRefused(await send('DELETE', t1, '192.0.2.1'), blockSeconds(byIp));
        // Another IP: only each token's own bucket counts.
        expectHeaders(await send('DELETE', t2, '198.51.100.7'), byToken.limit, byToken.limit - n2 - 1, byToken.windowMs / 1000);
        expectHeaders(await send('DELETE', t1, '198.51.100.7'), byToken.limit, byToken.limit - n1 - 1, byToken.windowMs / 1000);
        // No client address at all: one shared 'unknown' IP bucket.
        expectHeaders(await send('DELETE', t1, null), byToken.limit, byToken.limit - n1 - 2, byToken.windowMs / 1000);
      });

      it('limits are per token: another token of the same member has buckets of its own', async () => {
        const rule = tightest('PATCH');
        const t1 = await fresh();
        const t2 = (await h.api.admin.issueToken(h.a.owner.id, { scopes: ALL })).token;
        expect((await burst(rule.limit + 1, () => send('PATCH', t1))).filter(admitted)).toHaveLength(rule.limit);
        expectRefused(await send('PATCH', t1), blockSeconds(rule));
        expectHeaders(await send('PATCH', t2), rule.limit, rule.limit - 1, rule.windowMs / 1000);
      });

      it('a block outlasts the window; retrying in it neither shortens nor extends it; afterwards requests pass', async () => {
        const rule = tightest('PATCH');
        const block = blockSeconds(rule);
        expect(block * 1000).toBeGreaterThan(rule.windowMs);
        const token = await fresh();
        expect((await burst(rule.limit, () => send('PATCH', token))).filter(admitted)).toHaveLength(rule.limit);
        expectRefused(await send('PATCH', token), block);
        // Blocks are per bucket: the same token's GETs still pass.
        expect(admitted(await send('GET', token))).toBe(true);
        h.clock.advance(30_000);
        expectRefused(await send('PATCH', token), block - 30);
        h.clock.advance(rule.windowMs); // the window is long over, the block is not
        expectRefused(await send('PATCH', token), block - 30 - rule.windowMs / 1000);
        for (let i = 0; i < 5; i++) expectRefused(await send('PATCH', token), block - 30 - rule.windowMs / 1000);
        h.clock.set(h.clock.now() + (block - 30 - rule.windowMs / 1000 - 1) * 1000);
        expectRefused(await send('PATCH', token), 1);
        h.clock.advance(1_000);
        // Refused requests counted nowhere: a full bucket again.
        expectHeaders(await send('PATCH', token), rule.limit, rule.limit - 1, rule.windowMs / 1000);
      });

      it('sliding window: half a window into the next one, the previous window still counts half', async () => {
        const rule = tightest('PATCH');
        const token = await fresh();
        const before = Math.floor((rule.limit * 3) / 5);
        expect((await burst(before, () => send('PATCH', token))).filter(admitted)).toHaveLength(before);
        h.clock.advance(rule.windowMs + rule.windowMs / 2);
        // current + previous × ½ ≤ limit
        const expected = Math.floor(rule.limit - before / 2);
        const first = await send('PATCH', token);
        expectHeaders(first, rule.limit, expected - 1, rule.windowMs / 2000);
        let n = 1;
        for (; n < rule.limit + 1; n++) if (!admitted(await send('PATCH', token))) break;
        expect(n).toBe(expected);
        if (v.table === SPEC) expect(n).toBe(70);
      });

      it('a quarter window into the next one, the previous window counts three quarters', async () => {
        const rule = tightest('POST');
        const token = await fresh();
        const before = Math.floor(rule.limit / 2);
        expect((await burst(before, () => send('POST', token))).filter(admitted)).toHaveLength(before);
        h.clock.advance(rule.windowMs + rule.windowMs / 4);
        const expected = Math.floor(rule.limit - (before * 3) / 4);
        const rs: Reply[] = [];
        for (let n = 0; n <= rule.limit; n++) {
          const r = await send('POST', token);
          rs.push(r);
          if (!admitted(r)) break;
        }
        expect(rs.filter(admitted)).toHaveLength(expected);
        expectHeaders(rs[expected - 1]!, rule.limit, 0, (rule.windowMs * 3) / 4000);
        if (v.table === SPEC) expect(expected).toBe(125);
      });

      it('concurrency: limit + 20 requests at once, exactly limit admitted', async () => {
        const rule = tightest('PATCH');
        const token = await fresh();
        const rs = await Promise.all(Array.from({ length: rule.limit + 20 }, () => send('PATCH', token)));
        expect(rs.filter(admitted)).toHaveLength(rule.limit);
        for (const r of rs.filter((x) => !admitted(x))) expectRefused(r, blockSeconds(rule));
        const remaining = rs.filter(admitted).map((r) => Number(r.headers['x-ratelimit-remaining'])).sort((x, y) => x - y);
        expect(remaining).toEqual(Array.from({ length: rule.limit }, (_, i) => i));
      });

      it('concurrency: refused writes do nothing — exactly limit labels are created', async () => {
        const rule = tightest('POST');
        const token = await fresh();
        const tag = `Race ${Math.random().toString(36).slice(2, 8)}`;
        const rs = await Promise.all(Array.from({ length: rule.limit + 20 }, (_, i) => call('POST', '/labels', { token, body: { name: `${tag} ${i}` } })));
        expect(rs.filter((r) => r.status === 201)).toHaveLength(rule.limit);
        expect(rs.filter((r) => r.status === 429)).toHaveLength(20);
        const list = await call('GET', `/labels?name[startsWith]=${encodeURIComponent(tag)}&includeTotal=true&limit=1`, { token: await fresh() });
        expect(list.body.total).toBe(rule.limit);
      });
    });
  }

  describe(`[${factory.name}] Limits: configuring the rate limiter`, () => {
    let h: Harness;
    beforeAll(async () => {
      h = await harness(factory, {
        api: (_clock, store) => ({
          rateLimiter: createRateLimiter({
            store: 'database',
            sqlStore: store,
            limits: { GET: [{ limit: 3, windowMs: MIN, keyBy: 'token' }], DELETE: [{ limit: 2, windowMs: MIN, keyBy: 'ip' }] },
            blockMs: 90_000,
          }),
          clientIp: (req) => {
            const v = req.headers['x-client-ip'];
            return typeof v === 'string' ? v : req.remoteAddress;
          },
        }),
      });
    });
    afterAll(() => h.close());
    const fresh = async () => {
      h.clock.set(Math.floor(h.clock.now() / HOUR) * HOUR + HOUR);
      return (await h.api.admin.issueToken(h.a.owner.id, { scopes: ALL })).token;
    };
    const req = (method: string, path: string, token: string | null, headers: Record<string, string> = {}) =>
      h.api.handle({ method, url: `/api/v3${path}`, headers: { ...headers, ...(token ? { authorization: `Bearer ${token}` } : {}) }, remoteAddress: '10.9.9.9' });

    it('a method given in `limits` replaces its v3 buckets; the others keep theirs; blockMs sets the block', async () => {
      const token = await fresh();
      for (let i = 0; i < 3; i++) expect((await req('GET', '/members', token)).headers['x-ratelimit-limit']).toBe('3');
      const r = await req('GET', '/members', token);
      expect(r.status).toBe(429);
      expect(r.headers['retry-after']).toBe('90');
      expect(JSON.parse(r.body as string).retryAfter).toBe(90);
      expect((await req('PATCH', '/labels/nosuchlabel', token)).headers['x-ratelimit-limit']).toBe('100');
      h.clock.advance(89_000);
      expect((await req('GET', '/members', token)).status).toBe(429);
      h.clock.advance(1_000);
      expect((await req('GET', '/members', token)).status).toBe(200);
    });

    it('HEAD counts as GET; methods outside the table are not limited', async () => {
      const token = await fresh();
      expect((await req('HEAD', '/members', token)).headers['x-ratelimit-remaining']).toBe('2');
      expect((await req('GET', '/members', token)).headers['x-ratelimit-remaining']).toBe('1');
      for (let i = 0; i < 5; i++) {
        const r = await req('OPTIONS', '/members', token);
        expect(r.status).not.toBe(429);
        expect(r.headers['x-ratelimit-limit']).toBeUndefined();
      }
      expect((await req('GET', '/members', token)).headers['x-ratelimit-remaining']).toBe('0');
    });

    it('requests without a valid token are refused before counting (401), so they use no bucket', async () => {
      const token = await fresh();
      for (let i = 0; i < 5; i++) expect((await req('GET', '/members', null)).status).toBe(401);
      expect((await req('GET', '/members', token)).headers['x-ratelimit-remaining']).toBe('2');
    });

    it('the embedding application derives the client IP (clientIp option)', async () => {
      const token = await fresh();
      const other = (await h.api.admin.issueToken(h.a.regular.id, { scopes: ALL })).token;
      expect((await req('DELETE', '/labels/nosuchlabel', token, { 'x-client-ip': '203.0.113.5' })).status).toBe(404);
      expect((await req('DELETE', '/labels/nosuchlabel', other, { 'x-client-ip': '203.0.113.5' })).status).not.toBe(429);
      expect((await req('DELETE', '/labels/nosuchlabel', token, { 'x-client-ip': '203.0.113.5' })).status).toBe(429);
      // Same socket address, another derived IP: its own bucket.
      expect((await req('DELETE', '/labels/nosuchlabel', token, { 'x-client-ip': '203.0.113.6' })).status).toBe(404);
    });

    it('api.jobs.purge() forgets counters once they can no longer count', async () => {
      const token = await fresh();
      await req('GET', '/members', token);
      // Counters are kept two hours at least (the store may hold the API-host token endpoint's hourly counters).
      h.clock.advance(3 * HOUR);
      expect((await h.api.jobs.purge()).rateLimits).toBeGreaterThan(0);
      expect((await h.api.jobs.purge()).rateLimits).toBe(0);
      const n = await h.api.store.db.selectFrom('rate_counters').select((eb) => eb.fn.countAll().as('n')).executeTakeFirstOrThrow();
      expect(Number(n.n)).toBe(0);
    });

  });

  describe(`[${factory.name}] Limits: a read beside its count (issue 11)`, () => {
    // The database store under a gate: while `held`, no count answers (a slow database, another process's lock).
    let gate: Promise<void> | undefined;
    let h: Harness;
    beforeAll(async () => {
      h = await harness(factory, {
        api: (_clock, store) => {
          const counters = store.rateLimitStore?.() ?? sqlRateLimitStore(store);
          const held: RateLimitStore = {
            hit: async (buckets, now) => {
              if (gate) await gate;
              return counters.hit(buckets, now);
            },
          };
          return { rateLimiter: createRateLimiter({ store: held, limits: { GET: [{ limit: 20, windowMs: 5 * MIN, keyBy: 'token' }] } }) };
        },
      });
    });
    afterAll(() => h.close());
    const fresh = async () => {
      h.clock.set(Math.floor(h.clock.now() / HOUR) * HOUR + HOUR);
      return (await h.api.admin.issueToken(h.a.owner.id, { scopes: ALL })).token;
    };
    const get = (path: string, token: string) => h.api.handle({ method: 'GET', url: `/api/v3${path}`, headers: { authorization: `Bearer ${token}` } });
    /** Start `request` with the counts held; the statements run by then, and whether it answered before the count did. */
    async function whileHeld(request: () => Promise<HttpResponse>): Promise<{ statements: string[]; answeredEarly: boolean; reply: HttpResponse }> {
      let release!: () => void;
      gate = new Promise((resolve) => (release = resolve));
      let answered = false;
      let pending!: Promise<HttpResponse>;
      const statements = await h.countQueries(async () => {
        pending = request().finally(() => (answered = true));
        // Long enough for a read to reach the database and come back on either store.
        await new Promise((resolve) => setTimeout(resolve, 150));
      });
      const answeredEarly = answered;
      gate = undefined;
      release();
      return { statements, answeredEarly, reply: await pending };
    }
    const readsTask = (statements: string[]) => statements.some((q) => /from "?tasks"?/i.test(q) && !/rate_/.test(q));

    it('with room left (the last count left at least a tenth of the limit), a GET is read while it is counted; it answers only once counted', async () => {
      const p = await h.project();
      const t = await h.task(p.id, { name: 'read beside the count' });
      const token = await fresh();
      for (let i = 0; i < 2; i++) expect((await get(`/tasks/${t.id}`, token)).status).toBe(200);
      const { statements, answeredEarly, reply } = await whileHeld(() => get(`/tasks/${t.id}`, token));
      expect(readsTask(statements)).toBe(true);
      expect(answeredEarly).toBe(false);
      expect(reply.status).toBe(200);
      expect(JSON.parse(String(reply.body)).name).toBe('read beside the count');
      expect(reply.headers['x-ratelimit-remaining']).toBe('17');
    });

    it('a read that fails while its count is pending (404) answers its error once counted, and nothing is left unhandled', async () => {
      const token = await fresh();
      for (let i = 0; i < 2; i++) expect((await get('/members', token)).status).toBe(200);
      const missing = await whileHeld(() => get('/tasks/tsk_not_there_at_all', token));
      expect(missing.answeredEarly).toBe(false);
      expect(missing.reply.status).toBe(404);
      expect(missing.reply.headers['x-ratelimit-remaining']).toBe('17');
    });

    it("without room (a token's first request) the read waits for the count; a write always does", async () => {
      const p = await h.project();
      const t = await h.task(p.id);
      const token = await fresh();
      const first = await whileHeld(() => get(`/tasks/${t.id}`, token));
      expect(readsTask(first.statements)).toBe(false);
      expect(first.answeredEarly).toBe(false);
      expect(first.reply.status).toBe(200);
      expect(first.reply.headers['x-ratelimit-remaining']).toBe('19');
      const patch = (name: string) => h.api.handle({ method: 'PATCH', url: `/api/v3/tasks/${t.id}`, headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: JSON.stringify({ name }) });
      for (let i = 0; i < 2; i++) expect((await patch(`w${i}`)).status).toBe(200);
      const write = await whileHeld(() => patch('held'));
      expect(write.statements.filter((q) => /^\s*(update|insert|delete)/i.test(q) && !/rate_/.test(q))).toEqual([]);
      expect(write.reply.status).toBe(200);
    });

    it('a read started beside a count that refuses is dropped: 429 rate_limited, never the record; after a refusal reads wait again', async () => {
      const p = await h.project();
      const t = await h.task(p.id, { name: 'not for the refused' });
      const token = await fresh();
      for (let i = 0; i < 10; i++) expect((await get(`/tasks/${t.id}`, token)).status).toBe(200);
      // Ten left, and the limiter knows it: all fifteen are read while counted; five are refused. A dropped read
      // may still finish after its 429 has gone: the pause lets it.
      let replies!: HttpResponse[];
      const burst = await h.countQueries(async () => {
        replies = await Promise.all(Array.from({ length: 15 }, () => get(`/tasks/${t.id}`, token)));
        await new Promise((resolve) => setTimeout(resolve, 150));
      });
      expect(burst.filter((q) => readsTask([q]))).toHaveLength(15);
      expect(replies.filter((r) => r.status === 200)).toHaveLength(10);
      const refused = replies.filter((r) => r.status === 429);
      expect(refused).toHaveLength(5);
      for (const r of refused) {
        const body = JSON.parse(String(r.body));
        expect(body.code).toBe('rate_limited');
        expect(body.name).toBeUndefined();
        expect(Number(r.headers['retry-after'])).toBeGreaterThan(0);
      }
      const after = await whileHeld(() => get(`/tasks/${t.id}`, token));
      expect(readsTask(after.statements)).toBe(false);
      expect(after.reply.status).toBe(429);
    });
  });

  describe(`[${factory.name}] Limits: rateLimiter: false`, () => {
    let off: Harness;
    beforeAll(async () => {
      off = await harness(factory, { api: () => ({ rateLimiter: false }) });
    });
    afterAll(() => off.close());

    it('turns limits off: no X-RateLimit-* headers, no 429', async () => {
      const rs = await Promise.all(Array.from({ length: 5 }, () => off.get('/members')));
      for (const r of rs) {
        expect(r.status).toBe(200);
        expect(r.headers['x-ratelimit-limit']).toBeUndefined();
      }
    });
  });
}
