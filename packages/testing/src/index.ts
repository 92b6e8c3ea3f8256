/**
 * @pmapi/testing — a test harness for applications that embed pmapi.
 *
 * @example
 * import { createTestApi } from '@pmapi/testing';
 * const t = await createTestApi();
 * const r = await t.as(t.a.owner).post('/projects', { name: 'Launch' }); // r.status 201, r.body.id
 */
import { createMemoryBlobStore, createPmapi, fakeClock, type FakeClock, type HttpResponse, type Pmapi, type PmapiOptions, type WebhookAttempt, type WebhookRequest } from '@pmapi/core';
import { checkOptionNames, type SqlStore } from '@pmapi/core/sql';
import { openSqliteStore } from '@pmapi/adapter-sqlite';
import { createWebhookWorker, type RunResult } from '@pmapi/webhooks';
import { parseDuration } from './duration';

export { parseDuration } from './duration';

/** The instant a test API's clock starts at unless `now` says otherwise. */
export const DEFAULT_START = '2026-03-01T09:00:00.000Z';

/** Scopes every seeded token gets unless the member says otherwise. */
export const ALL_SCOPES: readonly string[] = ['read', 'write', 'delete'];

/** What a store factory is handed when the harness opens its store. */
export interface StoreOpenOptions {
  /** Receives the SQL of every statement the store runs (the query counter listens here). */
  onQuery?: (sql: string) => void;
  /** Connection-pool size, where the store pools connections. */
  max?: number;
}

/**
 * Where the harness gets a fresh, empty, migrated store: `{ name, open }`
 * (the conformance kit's form) or just the open function. Default: an
 * in-memory SQLite store.
 *
 * @example
 * createTestApi({ store: (o) => openPostgresStore({ connectionString, schema: 't1', onQuery: o.onQuery }) })
 */
export type TestStoreFactory = { name?: string; open(o?: StoreOpenOptions): Promise<SqlStore> } | ((o: StoreOpenOptions) => Promise<SqlStore>);

/** A v3 answer as a test sees it. */
export interface Reply {
  status: number;
  /** Response headers (lower-case names). */
  headers: Record<string, string>;
  /** Parsed JSON body (undefined for an empty answer such as 204; the text when it is not JSON). */
  body: any;
}

/** Per-request options. */
export interface RequestOptions {
  /** Bearer token to send; `null` or absent sends none (in `t.request`; `t.as(...)` fills it in). */
  token?: string | null;
  /** JSON body (serialised, `content-type: application/json`). */
  body?: unknown;
  /** A raw body string, sent as-is (for malformed-input tests). */
  raw?: string;
  headers?: Record<string, string>;
  /** Query parameters appended to the path (arrays repeat the key). */
  query?: Record<string, string | number | boolean | readonly (string | number | boolean)[] | undefined>;
}

/** A seeded member: its membership id and a personal access token. */
export interface TestMember {
  id: string;
  userId: string;
  name: string;
  /** Role name (owner, manager, regular, client, or a custom role's name). */
  role: string;
  token: string;
}

/** A seeded workspace. `manager`, `regular` and `client` are the first member of that role, when there is one. */
export interface TestWorkspace {
  id: string;
  name: string;
  generalPortfolioId: string;
  roleIds: Record<'owner' | 'manager' | 'regular' | 'client', string>;
  owner: TestMember;
  /** Every member besides the owner, in the order asked for. */
  members: TestMember[];
  manager?: TestMember;
  regular?: TestMember;
  client?: TestMember;
}

/** The default workspaces (`t.a`, `t.b`): an owner, a regular member and a client. */
export interface SeededWorkspace extends TestWorkspace {
  regular: TestMember;
  client: TestMember;
}

/** What `t.workspace()` seeds. */
export interface WorkspaceSeed {
  /** Default `Workspace N`. */
  name?: string;
  timezone?: string;
  owner?: { name?: string; email?: string; scopes?: readonly string[] };
  /** Members besides the owner (default: one regular, one client). Names default to `<workspace> <Role>`. */
  members?: ReadonlyArray<{ name?: string; email?: string; role?: string; scopes?: readonly string[] }>;
}

/** A webhook delivery the worker made, captured instead of sent. */
export interface CapturedDelivery {
  url: string;
  /** Headers as sent, lower-case names: `x-webhook-signature`, `x-webhook-event`, `x-webhook-delivery-id`, … */
  headers: Record<string, string>;
  /** The parsed envelope. */
  body: any;
  /** The exact bytes that were signed (for `verifyWebhookSignature(raw, headers['x-webhook-signature'], secret, { now })`). */
  raw: string;
  /** Fake-clock time of the attempt (ms). */
  at: number;
  /** The status the receiver answered (see `webhookReceiver`). */
  status: number;
}

/** Requests acting as one caller. Paths are relative to the API's base path (`/api/v3`). */
export interface Caller {
  request(method: string, path: string, o?: Omit<RequestOptions, 'token'>): Promise<Reply>;
  get(path: string, o?: Omit<RequestOptions, 'token'>): Promise<Reply>;
  post(path: string, body?: unknown, o?: Omit<RequestOptions, 'token' | 'body'>): Promise<Reply>;
  patch(path: string, body?: unknown, o?: Omit<RequestOptions, 'token' | 'body'>): Promise<Reply>;
  put(path: string, body?: unknown, o?: Omit<RequestOptions, 'token' | 'body'>): Promise<Reply>;
  del(path: string, o?: Omit<RequestOptions, 'token'>): Promise<Reply>;
}

type JobsOf = Pmapi['jobs'];
/** What one `runJobs()` did. */
export interface JobsRun {
  recurring: Awaited<ReturnType<JobsOf['recurring']>>;
  reminders: Awaited<ReturnType<JobsOf['reminders']>>;
  files: Awaited<ReturnType<JobsOf['processFiles']>>;
  purge: Awaited<ReturnType<JobsOf['purge']>>;
  /** Webhook jobs that came due, summed over the worker's rounds (failed ones are retried on a later run, after their backoff). */
  webhooks: RunResult;
}

export interface TestApiOptions {
  /** Store factory (default: in-memory SQLite). The project's own suites pass Postgres here. */
  store?: TestStoreFactory;
  /** Where the fake clock starts (default {@link DEFAULT_START}). */
  now?: number | string | Date;
  /** Turn the rate limiters on (default off, so tests are not throttled). */
  rateLimits?: boolean;
  /** Seed the two default workspaces `t.a` and `t.b` (default true). */
  seed?: boolean;
  /**
   * More createPmapi options (they win over the harness's), or a function of
   * the harness's clock and store returning them.
   */
  api?: Partial<PmapiOptions> | ((ctx: { clock: FakeClock; store: SqlStore }) => Partial<PmapiOptions>);
  /** Deliveries made by `POST /webhooks/{id}/test` are captured too (default true; false leaves that route unconfigured: 503). */
  webhookTestRoute?: boolean;
  /** How the captured receiver answers a delivery (HTTP status; default 200). Non-2xx makes the worker retry with backoff. */
  webhookReceiver?: (d: Omit<CapturedDelivery, 'status'>) => number | void | Promise<number | void>;
  /** Called with every v3 reply the harness's requests get (e.g. a response-schema check). */
  onResponse?: (method: string, url: string, reply: Reply) => void | Promise<void>;
  /** Connection-pool size for stores that pool (passed to the factory as `max`). */
  poolMax?: number;
  /** Unexpected errors the API answers with 500 (default console.error). */
  onError?: PmapiOptions['onError'];
}

export interface TestApi {
  api: Pmapi;
  store: SqlStore;
  clock: FakeClock;
  /** Workspace A: owner, regular and client, each with a token (unless `seed: false`). */
  a: SeededWorkspace;
  /** Workspace B, with the same members (another tenant). */
  b: SeededWorkspace;
  /** The API's v3 base path (`/api/v3` unless `api.basePath` says otherwise). */
  basePath: string;
  /** Seed another workspace with members and tokens. */
  workspace(seed?: WorkspaceSeed): Promise<TestWorkspace>;
  /** Seed one more member (with a token) into a workspace. */
  member(workspace: { id: string; name?: string }, m?: { name?: string; email?: string; role?: string; scopes?: readonly string[] }): Promise<TestMember>;
  /** Requests acting as a member (or with a raw token string). */
  as(who: { token: string } | string): Caller;
  /** Requests with no credentials. */
  anon: Caller;
  /** The one place v3 requests go through; `token` absent or null sends none. */
  request(method: string, path: string, o?: RequestOptions): Promise<Reply>;
  /** A request to a URL the API handed out (a blob link): the raw answer, bytes stay bytes. */
  fetchLink(method: string, url: string, body?: Uint8Array | string, headers?: Record<string, string>): Promise<HttpResponse>;
  /** Move the fake clock forward (`'2h'`, `'31d'`, `'1h30m'` or ms); returns the new time in ms. */
  advance(by: number | string): Promise<number>;
  /** Run every job that is due now: recurring rules, reminders, purge (30-day trash and sweeps), file jobs (a purged file's bytes go in the same run), then webhook delivery into `deliveries`. */
  runJobs(): Promise<JobsRun>;
  /** Webhook deliveries so far, oldest first (empty it with `t.deliveries.length = 0`). */
  deliveries: CapturedDelivery[];
  /** Run `fn`; the SQL statements it ran (`.length` is the count). */
  countQueries(fn: () => Promise<unknown>): Promise<string[]>;
  /** Outbox events, oldest first (parsed envelopes). */
  outbox(): Promise<any[]>;
  /** Close the API and its store. */
  close(): Promise<void>;
}

/** Every TestApiOptions key: any other is refused (a typo such as `webhookReciever` would quietly answer 200). */
const TEST_API_OPTIONS = ['store', 'now', 'rateLimits', 'seed', 'api', 'webhookTestRoute', 'webhookReceiver', 'onResponse', 'poolMax', 'onError'] as const satisfies ReadonlyArray<keyof TestApiOptions>;
type _AllTestApiOptions = Exclude<keyof TestApiOptions, (typeof TEST_API_OPTIONS)[number]> extends never ? true : never;
const _allTestApiOptions: _AllTestApiOptions = true;
void _allTestApiOptions;

const ROLE_TITLE: Record<string, string> = { owner: 'Owner', manager: 'Manager', regular: 'Regular', client: 'Client' };
const title = (role: string) => ROLE_TITLE[role] ?? role.charAt(0).toUpperCase() + role.slice(1);

function queryString(q: RequestOptions['query']): string {
  if (!q) return '';
  const p = new URLSearchParams();
  for (const [k, v] of Object.entries(q)) {
    if (v === undefined) continue;
    if (Array.isArray(v)) for (const x of v) p.append(k, String(x));
    else p.append(k, String(v));
  }
  const s = p.toString();
  return s ? s : '';
}

function parseBody(res: HttpResponse): unknown {
  if (res.body === undefined) return undefined;
  const text = typeof res.body === 'string' ? res.body : new TextDecoder().decode(res.body);
  if (text === '') return undefined;
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

/**
 * A fresh pmapi over a fresh store with a fake clock, rate limits off, file
 * bytes in memory and webhooks captured, seeded with two workspaces.
 *
 * @example
 * const t = await createTestApi();
 * const p = await t.as(t.a.owner).post('/projects', { name: 'Launch' });
 * await t.advance('31d'); await t.runJobs(); await t.close();
 */
export async function createTestApi(options: TestApiOptions = {}): Promise<TestApi> {
  // Checked before anything is opened: a misspelt option would be ignored, an unreadable start run the whole API on a NaN clock.
  checkOptionNames('createTestApi', options, TEST_API_OPTIONS);
  const start = options.now ?? DEFAULT_START;
  const startMs = typeof start === 'number' ? start : start instanceof Date ? start.getTime() : Date.parse(start);
  if (!Number.isFinite(startMs)) {
    throw new RangeError(`@pmapi/testing: now must be a time in ms, a Date or an ISO 8601 string (got ${typeof start === 'string' ? `'${start}'` : String(start)})`);
  }
  const queries: string[] = [];
  let counting = false;
  const open: StoreOpenOptions = { onQuery: (q) => { if (counting) queries.push(q); }, ...(options.poolMax ? { max: options.poolMax } : {}) };
  const factory = options.store;
  const store = !factory ? await openSqliteStore({ onQuery: open.onQuery }) : typeof factory === 'function' ? await factory(open) : await factory.open(open);
  const clock = fakeClock(startMs);

  const deliveries: CapturedDelivery[] = [];
  const receiver = options.webhookReceiver;
  const capture = async (req: WebhookRequest): Promise<WebhookAttempt> => {
    const headers: Record<string, string> = {};
    for (const [k, v] of Object.entries(req.headers)) headers[k.toLowerCase()] = v;
    let body: unknown;
    try {
      body = JSON.parse(req.body);
    } catch {
      body = req.body;
    }
    const d = { url: req.url, headers, body, raw: req.body, at: clock.now() };
    const status = (receiver ? await receiver(d) : undefined) ?? 200;
    deliveries.push({ ...d, status });
    const ok = status >= 200 && status < 300;
    return { ok, status, durationMs: 1, error: ok ? null : `HTTP ${status}` };
  };

  let api: Pmapi;
  let extra: Partial<PmapiOptions> = {};
  try {
    extra = typeof options.api === 'function' ? options.api({ clock, store }) : (options.api ?? {});
    api = await createPmapi({
      store,
      clock,
      onError: options.onError ?? ((e) => console.error(e)),
      ...(options.rateLimits ? {} : { rateLimiter: false }),
      ...(options.webhookTestRoute === false ? {} : { webhookSender: capture }),
      ...extra,
      // File options given in `api` (a quota, a thumbnailer) keep the in-memory bytes unless they bring a store.
      files: { store: createMemoryBlobStore(), ...extra.files },
    });
  } catch (err) {
    await store.close();
    throw err;
  }
  // Delivery with the real worker (claims, signing, retries, the log), its sender swapped for the capture; jitter off.
  const worker = createWebhookWorker({ store, sender: capture, clock, random: () => 0.5 });
  const basePath = extra.basePath?.replace(/\/$/, '') ?? '/api/v3';
  const onResponse = options.onResponse;

  let closed = false;
  /** After close() the store is gone: say so, rather than let the API answer 500 and log a driver error. */
  const open_ = (what: string) => {
    if (closed) throw new Error(`@pmapi/testing: ${what} after t.close() (this test API and its store are closed; create another with createTestApi())`);
  };

  async function request(method: string, path: string, o: RequestOptions = {}): Promise<Reply> {
    open_(`${method.toUpperCase()} ${path}`);
    const headers: Record<string, string> = {};
    for (const [k, v] of Object.entries(o.headers ?? {})) headers[k.toLowerCase()] = v;
    if (o.token != null && !('authorization' in headers)) headers.authorization = `Bearer ${o.token}`;
    let body: string | undefined;
    if (o.raw !== undefined) body = o.raw;
    else if (o.body !== undefined) {
      body = JSON.stringify(o.body);
      headers['content-type'] ??= 'application/json';
    }
    const qs = queryString(o.query);
    const url = `${basePath}${path}${qs ? (path.includes('?') ? '&' : '?') + qs : ''}`;
    const res = await api.handle({ method, url, headers, body, remoteAddress: '127.0.0.1' });
    const reply: Reply = { status: res.status, headers: res.headers, body: parseBody(res) };
    if (onResponse) await onResponse(method.toUpperCase(), url, reply);
    return reply;
  }

  function caller(token: string | null): Caller {
    const req = (method: string, path: string, o: Omit<RequestOptions, 'token'> = {}) => request(method, path, { ...o, token });
    return {
      request: req,
      get: (p, o) => req('GET', p, o),
      post: (p, body, o) => req('POST', p, { ...o, body }),
      patch: (p, body, o) => req('PATCH', p, { ...o, body }),
      put: (p, body, o) => req('PUT', p, { ...o, body }),
      del: (p, o) => req('DELETE', p, o),
    };
  }

  async function member(ws: { id: string; name?: string }, m: { name?: string; email?: string; role?: string; scopes?: readonly string[] } = {}): Promise<TestMember> {
    const role = m.role ?? 'regular';
    const info = await api.admin.addMember(ws.id, { name: m.name ?? `${ws.name ?? 'Workspace'} ${title(role)}`, role, ...(m.email ? { email: m.email } : {}) });
    const tok = await api.admin.issueToken(info.id, { scopes: m.scopes ?? ALL_SCOPES });
    return { id: info.id, userId: info.userId, name: info.name, role: info.role, token: tok.token };
  }

  let seq = 0;
  async function workspace(seed: WorkspaceSeed = {}): Promise<TestWorkspace> {
    seq++;
    const name = seed.name ?? `Workspace ${seq}`;
    const ownerName = seed.owner?.name ?? `${name} Owner`;
    const email = seed.owner?.email ?? `owner@${name.toLowerCase().replace(/[^a-z0-9]+/g, '-')}.test`;
    const ws = await api.admin.createWorkspace({ name, ...(seed.timezone ? { timezone: seed.timezone } : {}), owner: { name: ownerName, email } });
    const ownerTok = await api.admin.issueToken(ws.ownerMemberId, { scopes: seed.owner?.scopes ?? ALL_SCOPES });
    // The admin surface does not hand back the owner's person id: read it (one statement).
    const ownerRow = await store.db.selectFrom('members').select(['user_id']).where('id', '=', ws.ownerMemberId).executeTakeFirstOrThrow();
    const owner: TestMember = { id: ws.ownerMemberId, userId: String(ownerRow.user_id), name: ownerName, role: 'owner', token: ownerTok.token };
    const out: TestWorkspace = { id: ws.id, name, generalPortfolioId: ws.generalPortfolioId, roleIds: ws.roleIds, owner, members: [] };
    const wanted = seed.members ?? [{ role: 'regular' }, { role: 'client' }];
    const perRole: Record<string, number> = {};
    for (const m of wanted) {
      const role = m.role ?? 'regular';
      const n = (perRole[role] = (perRole[role] ?? 0) + 1);
      const made = await member({ id: ws.id, name }, { ...m, role, name: m.name ?? `${name} ${title(role)}${n > 1 ? ` ${n}` : ''}` });
      out.members.push(made);
      if ((role === 'manager' || role === 'regular' || role === 'client') && !out[role]) out[role] = made;
    }
    return out;
  }

  let a: SeededWorkspace | undefined;
  let b: SeededWorkspace | undefined;
  if (options.seed !== false) {
    try {
      a = (await workspace({ name: 'Alpha' })) as SeededWorkspace;
      b = (await workspace({ name: 'Beta' })) as SeededWorkspace;
    } catch (err) {
      await api.close();
      throw err;
    }
  }
  const unseeded = (): never => {
    throw new Error('@pmapi/testing: created with seed: false, so there is no default workspace (seed one with t.workspace())');
  };

  const t: TestApi = {
    api,
    store,
    clock,
    get a() {
      return a ?? unseeded();
    },
    get b() {
      return b ?? unseeded();
    },
    basePath,
    workspace,
    member,
    as: (who) => caller(typeof who === 'string' ? who : who.token),
    anon: caller(null),
    request,
    async fetchLink(method, url, body, headers = {}) {
      open_(`fetchLink ${method.toUpperCase()}`);
      const u = new URL(url, 'http://in-process.invalid');
      return api.handle({ method, url: `${u.pathname}${u.search}`, headers, body, remoteAddress: '127.0.0.1' });
    },
    async advance(by) {
      clock.advance(parseDuration(by));
      return clock.now();
    },
    async runJobs() {
      open_('runJobs()');
      const recurring = await api.jobs.recurring();
      const reminders = await api.jobs.reminders();
      // A capped reminders run says `more`: go on until this instant's work is done.
      for (let i = 0; reminders.more && i < 100; i++) {
        const r = await api.jobs.reminders();
        reminders.created += r.created;
        reminders.removed += r.removed;
        reminders.fired += r.fired;
        reminders.more = r.more;
      }
      // Purge before the file jobs: destroying a trashed file (and sweeping expired uploads) queues the removal of its bytes.
      const purge = await api.jobs.purge();
      const files = await api.jobs.processFiles(1000);
      // A full batch may leave more due jobs: go on until a run claims fewer (failures retry later, after their backoff).
      for (let i = 0, last = files.claimed; last === 1000 && i < 100; i++) {
        const r = await api.jobs.processFiles(1000);
        for (const k of Object.keys(files) as (keyof typeof files)[]) files[k] += r[k];
        last = r.claimed;
      }
      const webhooks: RunResult = { claimed: 0, delivered: 0, failed: 0, dropped: 0, stale: 0 };
      // Rounds until nothing due is left (a failed attempt is rescheduled into the future, so this ends).
      for (let i = 0; i < 1000; i++) {
        const r = await worker.runOnce();
        for (const k of Object.keys(webhooks) as (keyof RunResult)[]) webhooks[k] += r[k];
        if (r.claimed === 0) break;
      }
      await worker.sweep();
      return { recurring, reminders, files, purge, webhooks };
    },
    deliveries,
    async countQueries(fn) {
      queries.length = 0;
      counting = true;
      try {
        await fn();
      } finally {
        counting = false;
      }
      return [...queries];
    },
    async outbox() {
      const rows = await store.db.selectFrom('outbox').select(['body']).orderBy('created_at').orderBy('id').execute();
      return rows.map((r) => store.dialect.decode('json', r.body));
    },
    async close() {
      if (closed) return;
      closed = true;
      await api.close();
    },
  };
  return t;
}
