import type { FakeClock, HttpResponse, Pmapi, PmapiOptions } from '@pmapi/core';
import { createTestApi, type Reply, type RequestOptions } from '@pmapi/testing';
import type { SqlStore } from '@pmapi/core/sql';
import { contractOf, type Contract } from './contract';

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

/** A v3 answer and per-request options: the public harness's own (the kit is built on it). */
export type { Reply, RequestOptions } from '@pmapi/testing';

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

/**
 * Build a fresh API over a fresh store, seeded with two workspaces: the
 * public harness of @pmapi/testing (createTestApi) on the suite's store
 * factory, with the kit's defaults (no webhook sender unless a suite brings
 * one: POST /webhooks/{id}/test answers 503) and its helpers on top.
 */
export async function harness(factory: StoreFactory, options: { api?: (clock: FakeClock, store: SqlStore) => Partial<PmapiOptions>; poolMax?: number } = {}): Promise<Harness> {
  const t = await createTestApi({
    store: factory,
    webhookTestRoute: false,
    ...(options.api ? { api: ({ clock, store }: { clock: FakeClock; store: SqlStore }) => options.api!(clock, store) } : {}),
    ...(options.poolMax ? { poolMax: options.poolMax } : {}),
  });
  const { a, b } = t;
  let contract: Contract | undefined;
  const contractNow = () => (contract ??= contractOf(t.api.openapi()));
  // Suites that call h.api.handle themselves (rate limits, the error walk, fuzzing) are held to the contract too:
  // v3 JSON answers and bodiless ones, not blob links or the HTML reference pages.
  const skip = [`${t.basePath}/blobs/`, `${t.basePath}/errors`, `${t.basePath}/versioning`];
  const api: Pmapi = {
    ...t.api,
    async handle(request) {
      const res = await t.api.handle(request);
      const path = request.url.split('?')[0]!;
      if (skip.some((p) => path.startsWith(p))) return res;
      const json = /^application\/(?:[a-z0-9.+-]+\+)?json\b/i.test(res.headers['content-type'] ?? '');
      if (res.body !== undefined && !json) return res;
      const body = res.body === undefined ? undefined : JSON.parse(text(res.body));
      const sent = request.body === undefined ? undefined : parsedOrUndefined(text(request.body));
      contractNow().checkReply(request.method, request.url, { status: res.status, headers: res.headers, body }, sent);
      return res;
    },
  };
  /** Every v3 request of every suite goes through here (as a.owner unless another token, or null, is given). */
  async function req(method: string, path: string, o: RequestOptions = {}): Promise<Reply> {
    const reply = await t.request(method, path, { ...o, token: o.token === undefined ? a.owner.token : o.token });
    // Issue 17 "The contract": the reply must be what the served OpenAPI document describes (contract.ts).
    contractNow().checkReply(method, `${t.basePath}${path}`, reply, o.raw !== undefined ? parsedOrUndefined(o.raw) : o.body);
    return reply;
  }
  const h: Harness = {
    api,
    store: t.store,
    clock: t.clock,
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
    fetchLink: (method, url, body, headers = {}) => t.fetchLink(method, url, body, headers),
    countQueries: (fn) => t.countQueries(fn),
    outbox: () => t.outbox(),
    close: () => t.close(),
  };
  return h;
}

const text = (b: string | Uint8Array): string => (typeof b === 'string' ? b : new TextDecoder().decode(b));

/** A raw request body as JSON, or undefined when it is not JSON (the contract checks only JSON bodies the server accepted). */
function parsedOrUndefined(raw: string): unknown {
  try {
    return JSON.parse(raw);
  } catch {
    return undefined;
  }
}
