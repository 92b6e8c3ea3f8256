import { createMemoryBlobStore, createPmapi, fakeClock, type FakeClock, type HttpResponse, type Pmapi, type PmapiOptions } from '@pmapi/core';
import type { SqlStore } from '@pmapi/core/sql';

/** How a suite gets a fresh, empty, migrated store. */
export interface StoreFactory {
  name: string;
  /** `onQuery` receives the SQL of every query the store runs (for query-count checks). */
  open(o?: { onQuery?: (sql: string) => void; /** Connection-pool size, where the store pools connections. */ max?: number }): Promise<SqlStore>;
}

export interface Member {
  id: string;
  token: string;
}

export interface Workspace {
  id: string;
  generalPortfolioId: string;
  roleIds: Record<'owner' | 'manager' | 'regular' | 'client', string>;
  owner: Member;
  regular: Member;
  client: Member;
}

export interface Reply {
  status: number;
  headers: Record<string, string>;
  /** Parsed JSON body (undefined for 204). */
  body: any;
}

export interface RequestOptions {
  token?: string | null;
  body?: unknown;
  /** Raw body string (sent as-is). */
  raw?: string;
  headers?: Record<string, string>;
}

export interface Harness {
  api: Pmapi;
  /** The store under `api` (to build a second API over the same data). */
  store: SqlStore;
  clock: FakeClock;
  /** Two workspaces: A with owner, regular and client members; B with its own owner. */
  a: Workspace;
  b: Workspace;
  /** Call the v3 API in-process as `a.owner` unless another token is given. `path` is relative to /api/v3. */
  req(method: string, path: string, o?: RequestOptions): Promise<Reply>;
  get(path: string, o?: RequestOptions): Promise<Reply>;
  post(path: string, body?: unknown, o?: RequestOptions): Promise<Reply>;
  patch(path: string, body?: unknown, o?: RequestOptions): Promise<Reply>;
  del(path: string, o?: RequestOptions): Promise<Reply>;
  /** Create a project in workspace A (as its owner); returns the response body. */
  project(body?: Record<string, unknown>, token?: string): Promise<any>;
  /** Create a task; returns the response body. */
  task(projectId: string, body?: Record<string, unknown>, token?: string): Promise<any>;
  /**
   * Upload bytes the spec's way (upload URL, PUT to it, POST /files with the
   * uploadKey) as `token` (default a.owner); `body` holds the name and the
   * place. Returns the POST /files reply.
   */
  upload(bytes: Uint8Array | string, body: Record<string, unknown>, token?: string): Promise<Reply>;
  /** A request to a URL the API handed out (a blob link), answered as is (bytes stay bytes). */
  fetchLink(method: string, url: string, body?: Uint8Array, headers?: Record<string, string>): Promise<HttpResponse>;
  /** Run `fn` and return the SQL statements it executed. */
  countQueries(fn: () => Promise<unknown>): Promise<string[]>;
  /** Rows of the outbox, oldest first (parsed envelopes). */
  outbox(): Promise<any[]>;
  close(): Promise<void>;
}

const ALL = ['read', 'write', 'delete'];

/** Build a fresh API over a fresh store, seeded with two workspaces. */
export async function harness(factory: StoreFactory, options: { api?: (clock: FakeClock, store: SqlStore) => Partial<PmapiOptions>; poolMax?: number } = {}): Promise<Harness> {
  const queries: string[] = [];
  let counting = false;
  const store = await factory.open({ onQuery: (q) => { if (counting) queries.push(q); }, ...(options.poolMax ? { max: options.poolMax } : {}) });
  const clock = fakeClock('2026-03-01T09:00:00.000Z');
  // Rate limits are off unless a suite turns them on (they have a suite of their own).
  // Files keep their bytes in memory unless a suite brings its own store.
  const api = await createPmapi({ store, clock, onError: (e) => console.error(e), rateLimiter: false, files: { store: createMemoryBlobStore() }, ...(options.api?.(clock, store) ?? {}) });
  async function workspace(name: string): Promise<Workspace> {
    const ws = await api.admin.createWorkspace({ name, owner: { name: `${name} Owner`, email: `owner@${name.toLowerCase()}.test` } });
    const ownerTok = await api.admin.issueToken(ws.ownerMemberId, { scopes: ALL });
    const reg = await api.admin.addMember(ws.id, { name: `${name} Regular`, role: 'regular' });
    const regTok = await api.admin.issueToken(reg.id, { scopes: ALL });
    const cli = await api.admin.addMember(ws.id, { name: `${name} Client`, role: 'client' });
    const cliTok = await api.admin.issueToken(cli.id, { scopes: ALL });
    return {
      id: ws.id,
      generalPortfolioId: ws.generalPortfolioId,
      roleIds: ws.roleIds,
      owner: { id: ws.ownerMemberId, token: ownerTok.token },
      regular: { id: reg.id, token: regTok.token },
      client: { id: cli.id, token: cliTok.token },
    };
  }
  const a = await workspace('Alpha');
  const b = await workspace('Beta');
  async function req(method: string, path: string, o: RequestOptions = {}): Promise<Reply> {
    const headers: Record<string, string> = { ...(o.headers ?? {}) };
    const token = o.token === undefined ? a.owner.token : o.token;
    if (token !== null && !('authorization' in headers)) headers.authorization = `Bearer ${token}`;
    let body: string | undefined;
    if (o.raw !== undefined) body = o.raw;
    else if (o.body !== undefined) {
      body = JSON.stringify(o.body);
      headers['content-type'] ??= 'application/json';
    }
    const res = await api.handle({ method, url: `/api/v3${path}`, headers, body, remoteAddress: '127.0.0.1' });
    return { status: res.status, headers: res.headers, body: res.body === undefined ? undefined : JSON.parse(typeof res.body === 'string' ? res.body : new TextDecoder().decode(res.body)) };
  }
  const h: Harness = {
    api,
    store,
    clock,
    a,
    b,
    req,
    get: (p, o) => req('GET', p, o),
    post: (p, body, o) => req('POST', p, { ...o, body }),
    patch: (p, body, o) => req('PATCH', p, { ...o, body }),
    del: (p, o) => req('DELETE', p, o),
    async project(body = {}, token) {
      const r = await req('POST', '/projects', { body: { name: `P ${Math.random().toString(36).slice(2, 8)}`, ...body }, token });
      if (r.status !== 201) throw new Error(`project create failed: ${r.status} ${JSON.stringify(r.body)}`);
      return r.body;
    },
    async task(projectId, body = {}, token) {
      const r = await req('POST', '/tasks', { body: { name: 'A task', projectId, ...body }, token });
      if (r.status !== 201) throw new Error(`task create failed: ${r.status} ${JSON.stringify(r.body)}`);
      return r.body;
    },
    async upload(bytes, body, token) {
      const data = typeof bytes === 'string' ? new TextEncoder().encode(bytes) : bytes;
      const slot = await req('POST', '/files/upload-url', { body: { size: data.byteLength }, token });
      if (slot.status !== 200) return slot;
      const put = await h.fetchLink('PUT', slot.body.url, data);
      if (put.status !== 200) throw new Error(`upload PUT failed: ${put.status} ${String(put.body)}`);
      return req('POST', '/files', { body: { size: data.byteLength, uploadKey: slot.body.uploadKey, ...body }, token });
    },
    async fetchLink(method, url, body, headers = {}) {
      const u = new URL(url, 'http://in-process.invalid');
      return api.handle({ method, url: `${u.pathname}${u.search}`, headers, body, remoteAddress: '127.0.0.1' });
    },
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
    close: () => api.close(),
  };
  return h;
}
