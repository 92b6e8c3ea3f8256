import { createHmac, randomBytes } from 'node:crypto';
import { systemClock, type Clock } from './clock/index';
import { randomIds, type IdGenerator } from './ids/index';
import { builtinResources } from './resources/index';
import { Registry } from './resources/registry';
import type { Resource } from './resources/define-resource';
import type { SqlStore } from './sql/dialect';
import { insertSecretIfAbsent, readSecret } from './sql/queries/secrets';
import { Engine } from './services/engine';
import { sweepKeys } from './services/idempotency';
import { sweepOAuth } from './oauth/sweep';
import { Admin } from './admin/admin';
import { createHandler } from './http/handle';
import type { HttpRequest, HttpResponse } from './http/types';
import type { Principal } from './services/context';
import { ProblemError, problemBody } from './errors/problem';
import type { ErrorCode } from './errors/codes';
import { builtinRolePermissions, permissionCatalog, requiredPermissions } from './auth/permissions';
import { cachedTokenLookup, type PermissionResolver } from './auth/tokens';
import { TOKEN_TABLES } from './sql/queries/tokens';
import { routeTable, type CustomRoute, type RouteInfo, type ExtraPermissions } from './http/routes';
import { createRateLimiter, type RateLimiter } from './limits/index';
import { builtinRoutes } from './routes/index';
import { bindWebhookRuntime } from './webhooks/runtime';
import type { WebhookSender } from './webhooks/index';
import { createOAuthServer, validateIssuer, type OAuthOptions, type OAuthServer } from './oauth/index';
import { memoryRateLimitStore } from './limits/memory';
import { sqlRateLimitStore } from './limits/sql';
import { fileServices, type FileOptions, type FileServices } from './files/service';
import { runFileJobs, sweepUploads, type FileJobsResult } from './files/jobs';
import { runRemindersJob, type RemindersJobOptions, type RemindersJobResult } from './jobs/reminders';
import { runRecurringJob, type RecurringJobResult } from './jobs/recurring';
import { uploadOpen } from './sql/queries/files';
import { BLOB_KEY_PATTERN } from './files/local';
import type { Kysely } from 'kysely';
import { contentTypeOf, safeDisposition, serveBlobRequest } from './files/serve';
import { verifyBlobLink } from './files/links';
import { errorCodes } from './errors/codes';
import { createLegacyHandler } from './http/legacy';
import { createLegacyRateLimiter, type LegacyRateLimiter } from './limits/legacy';
import { LEGACY_PREFIX, legacyErrorBody, legacyHeaders } from './presenters/legacy';
import { validateOptions } from './options';
import { observeRequest } from './http/observe';
import { mountOf } from './http/mount';
import { errorIndexHtml, errorIndexMarkdown, errorReferenceHtml, errorReferenceMarkdown, versioningHtml, versioningMarkdown } from './errors/reference';
import { isErrorCode } from './errors/codes';
import { pingStore } from './sql/queries/health';
import { openApiServer } from './openapi/serve';
import type { OpenApiDocument } from './openapi/document';

/**
 * One answered request, for logs and metrics (`createPmapi({ onRequest })`).
 * Never carries the token or any header.
 */
export interface RequestInfo {
  method: string;
  /** The matched route pattern (`/api/v3/tasks/{id}`), not the raw URL; null when no route matched (404, a refused request before routing). */
  route: string | null;
  status: number;
  /** Time from `handle` being called to its answer, ms (fractional). */
  durationMs: number;
  /** The answer's `X-Request-Id` (null when the answer has none, e.g. OAuth token endpoint answers). */
  requestId: string | null;
  /** The authenticated workspace (team id); null when the request was not authenticated. */
  workspace: string | null;
}

export interface PmapiOptions {
  /** An opened store: `await openSqliteStore()` or the Postgres adapter's. */
  store: SqlStore;
  /** Where time comes from (default: the wall clock). Tests pass `fakeClock()`. */
  clock?: Clock;
  /** Where ids and secrets come from (default: crypto-random). */
  ids?: IdGenerator;
  /** Key material for signed cursors. Default: generated once and kept in the database, so every process agrees. */
  secret?: string | Uint8Array;
  /** Mount point of v3 (default `/api/v3`). */
  basePath?: string;
  /**
   * Base of problem `docsUrl` links (`{docsBaseUrl}/errors/{code}`) and of the legacy
   * `Link` to `{docsBaseUrl}/versioning`. Default: the API's own reference pages,
   * which `handle` serves at `{basePath}/errors/{code}` and `{basePath}/versioning`,
   * as a path from the request's mount (`/api/v3`, `/pm/api/v3` under a `/pm` mount).
   * Set an absolute URL to point clients elsewhere (your docs site, or the API's
   * public URL: `https://app.example.com/pm/api/v3`).
   */
  docsBaseUrl?: string;
  /** Labels every new workspace gets as locked system defaults. */
  defaultLabels?: readonly string[];
  /** Unexpected errors (answered 500 without details) are reported here; default console.error. */
  onError?: (err: unknown, req: HttpRequest) => void;
  /** Extra resource declarations (advanced). */
  resources?: readonly Resource[];
  /**
   * Rate limits of spec "Limits" (default on: counters in the database when
   * several processes may share it — Postgres — else in memory); configure with
   * `createRateLimiter({...})`; `false` turns them off (tests, internal traffic).
   */
  rateLimiter?: RateLimiter | false;
  /** How the client IP (DELETE's second bucket) is derived; default the front end's `remoteAddress` (http-node: see `trustProxy`). */
  clientIp?: (req: HttpRequest) => string | undefined;
  /** Sends `POST /webhooks/{id}/test` deliveries (@pmapi/webhooks provides one); without it that route answers 503. */
  webhookSender?: WebhookSender;
  /** Mount the OAuth 2.1 authorization server (issue 6): `api.oauth.handle` serves it. */
  oauth?: OAuthOptions;
  /** File bytes: the blob store, link origin, quota, upload-from-URL fetcher and thumbnailer (see {@link FileOptions}). */
  files?: FileOptions;
  /** How long a search operation may run before it answers 400 search_timed_out, ms (default 5000). */
  searchTimeoutMs?: number;
  /**
   * The legacy v1.0 surface's rate limiter (spec "Limits", legacy table), checked
   * on every authenticated /api/v1.0 request. Default: on, counters placed as
   * `rateLimiter`'s (database when processes may share it, else memory), off
   * when `rateLimiter` is `false`; `false` turns it off.
   */
  legacyRateLimiter?: LegacyRateLimiter | false;
  /**
   * Called once for every request `handle` or `oauth.handle` answers (v3, legacy
   * v1.0, health, reference pages, blob links, the OAuth server), after the answer is made:
   * method, matched route pattern, status, duration, request id and
   * workspace (never the token). Plug a logger in (`onRequest: (i) =>
   * logger.info(i, 'request')`) or a metrics library (a histogram of
   * `durationMs` labelled by method, route and status). A hook that throws is
   * reported to `onError`; the answer is unaffected.
   */
  onRequest?: (info: RequestInfo) => void;
  /**
   * Webhook registration. `allowLoopback: true` (local development only, off by
   * default) accepts http:// and https:// receivers on localhost, 127.0.0.0/8
   * and [::1], as the Stripe CLI does; the sender must allow them too
   * (`createWebhookSender({ allowLoopback: true })`).
   */
  webhooks?: { allowLoopback?: boolean };
}

export interface Pmapi {
  /** The v3 API as a function of plain request records. */
  handle(req: HttpRequest): Promise<HttpResponse>;
  /** The OAuth 2.1 authorization server, when `oauth` options were given. */
  oauth?: OAuthServer;
  /** Where v3 is (createPmapi's `basePath`, no trailing slash): front ends read it, so it is set once. */
  readonly basePath: string;
  /** Workspaces, members and tokens for the embedding application. */
  admin: Admin;
  /** Background work the host schedules (e.g. every minute). */
  jobs: {
    /** Destroy soft-deleted rows past 30 days, forget stale idempotency keys, rate-limit counters and expired uploads. */
    purge(): Promise<{ purged: number; keys: number; rateLimits: number; oauth: number; uploads: number }>;
    /**
     * Run due file jobs once (at most `limit`, default 20): thumbnails of new
     * files, removal of bytes whose file is gone. Schedule it every few seconds.
     */
    processFiles(limit?: number): Promise<FileJobsResult>;
    /**
     * Reminders (spec "Reminder"): remove overdue reminders that no longer
     * hold, create overdue reminders from passed due dates, and fire every
     * reminder whose date has come (once each). Schedule it every minute;
     * a run's work is capped (`more` when it stopped there), and a run that
     * found another runner at work answers `skipped` (Postgres).
     */
    reminders(opts?: RemindersJobOptions): Promise<RemindersJobResult>;
    /**
     * Recurring rules (issue 13): create the task of every rule whose
     * nextRunAt has come (one per rule and run; never twice for one
     * occurrence) and advance nextRunAt. Schedule it every minute. `limit`
     * (1-1000, clamped; default 1000) bounds the due rules one run looks at.
     * A rule that fails unexpectedly is reported to `onError` (request
     * `{method: 'JOB', url: 'jobs.recurring'}`), counted in `errors` and
     * tried again next run.
     */
    recurring(limit?: number): Promise<RecurringJobResult>;
  };
  /** Every route with the scope and role permissions it needs. */
  routes(): RouteInfo[];
  /** Every role permission name. */
  permissions: readonly string[];
  /** The OpenAPI 3.1 document of the v3 surface (issue 17), built once; also served without authentication at `GET {basePath}/openapi.json`. */
  openapi(): OpenApiDocument;
  /** A problem response for failures a front end detects itself (oversized body, …). */
  problem(code: ErrorCode, detail: string, url: string, extras?: Record<string, unknown>, mount?: string): HttpResponse;
  /**
   * Report to `onRequest` a request the front end answered without `handle` or
   * `oauth.handle` (a 413 or 408 about the body, two Authorization headers, a
   * CORS preflight, its last-resort 500), so every request served is seen once.
   * `startedAt` is the `performance.now()` of its arrival. No-op without `onRequest`.
   */
  observe(req: HttpRequest, res: HttpResponse, startedAt: number): void;
  registry: Registry;
  store: SqlStore;
  clock: Clock;
  close(): Promise<void>;
}

async function loadSecret(store: SqlStore, ids: IdGenerator): Promise<Uint8Array> {
  let value = await readSecret(store.db, 'cursor');
  if (value === undefined) {
    await insertSecretIfAbsent(store.db, 'cursor', ids.secret(48));
    value = await readSecret(store.db, 'cursor');
  }
  return Buffer.from(value!, 'utf8');
}

/**
 * Create the v3 API over an opened store.
 *
 * @example
 * const api = await createPmapi({ store: await openSqliteStore() });
 * const res = await api.handle({ method: 'GET', url: '/api/v3/tasks', headers: { authorization: `Bearer ${token}` } });
 */
export async function createPmapi(o: PmapiOptions): Promise<Pmapi> {
  // Options are checked first, each bad one named (issue 16): no TypeError from deep inside, no typo ignored.
  validateOptions(o);
  const clock = o.clock ?? systemClock;
  const ids = o.ids ?? randomIds;
  /** Unexpected errors (they answer 500 without details): the host's hook, else the console. */
  const onError: (err: unknown, req: HttpRequest) => void = o.onError ?? ((err) => console.error('pmapi: unexpected error', err));
  // A host's resource may not take a path the API answers itself: its own pages (health, the OpenAPI
  // document, the error reference), blob links, or the first segment of an operation route.
  const resourcePaths = new Set(builtinResources.map((r) => r.path));
  const reserved = ['health', 'openapi.json', 'errors', 'versioning', 'blobs', ...builtinRoutes.map((r) => r.path.split('/')[0]!).filter((p) => !resourcePaths.has(p))];
  const registry = new Registry([...builtinResources, ...(o.resources ?? [])], [...new Set(reserved)]);
  const cursorSecret =
    o.secret === undefined ? await loadSecret(o.store, randomIds) : typeof o.secret === 'string' ? Buffer.from(o.secret, 'utf8') : o.secret;
  const basePath = o.basePath ?? '/api/v3';
  const files = fileServices(o.files ?? {}, cursorSecret ?? randomBytes(32), basePath);
  const engine = new Engine(o.store, { registry, clock, ids, cursorSecret: cursorSecret ?? randomBytes(32), files, ...(o.searchTimeoutMs !== undefined ? { searchTimeoutMs: o.searchTimeoutMs } : {}) });
  bindWebhookRuntime(registry, {
    ...(o.webhookSender ? { sender: o.webhookSender } : {}),
    ...(o.webhooks?.allowLoopback ? { allowLoopback: true } : {}),
    publish: (principal, events, now) => o.store.transaction((trx) => engine.flushEvents(trx, principal, events, now)),
  });
  const base = basePath.replace(/\/$/, '');
  // The reference pages: the host's (docsBaseUrl) or the API's own, under the mount the request came through.
  const hostDocs = o.docsBaseUrl?.replace(/\/+$/, '');
  const docsBase = (req: Pick<HttpRequest, 'mount'>) => hostDocs ?? `${mountOf(req)}${base}`;
  const catalog = permissionCatalog(registry);
  const builtin = new Map<string, ReadonlySet<string>>();
  const permissionsOf: PermissionResolver = (role) => {
    if (role.editable) return new Set(role.permissions);
    let set = builtin.get(role.name);
    if (!set) {
      set = new Set(builtinRolePermissions(role.name, registry));
      builtin.set(role.name, set);
    }
    return set;
  };
  // Role permissions standard operations need beyond their scope (spec "Authentication" rule 5), as each resource declares them.
  const extraPermissions: ExtraPermissions = (resource, action) => [...requiredPermissions(registry, resource, action)];
  const customRoutes: CustomRoute[] = [...builtinRoutes];
  const limiter = o.rateLimiter === undefined
    ? createRateLimiter(o.store.dialect.capabilities.multiProcess ? { store: 'database', sqlStore: o.store } : { store: 'memory' })
    : o.rateLimiter || undefined;
  // Token rows remembered while the database has not changed, where the store can tell (SQLite).
  const tokenLookup = o.store.changeStamp ? cachedTokenLookup(o.store.db, o.store.dialect, o.store.changeStamp(TOKEN_TABLES)) : undefined;
  const v3Handle = createHandler(engine, {
    basePath,
    docsBase,
    routes: customRoutes,
    permissionsOf,
    ...(tokenLookup ? { tokenLookup } : {}),
    extraPermissions,
    ...(limiter ? { limiter } : {}),
    ...(o.clientIp ? { clientIp: o.clientIp } : {}),
    onError,
  });
  // The frozen legacy v1.0 surface (issue 15): a second presenter over the same engine operations.
  const legacyLimiter = o.legacyRateLimiter === undefined
    ? (o.rateLimiter === false ? undefined : createLegacyRateLimiter(o.store.dialect.capabilities.multiProcess ? { store: 'database', sqlStore: o.store } : { store: 'memory' }))
    : o.legacyRateLimiter || undefined;
  const legacyHandle = createLegacyHandler(engine, {
    docsBase,
    permissionsOf,
    ...(tokenLookup ? { tokenLookup } : {}),
    extraPermissions,
    ...(legacyLimiter ? { legacyLimiter } : {}),
    ...(o.clientIp ? { clientIp: o.clientIp } : {}),
    onError,
  });
  /** Whether a path (no query) is the legacy surface's. */
  const isLegacyPath = (path: string) => path === LEGACY_PREFIX || path.startsWith(`${LEGACY_PREFIX}/`);
  const isLegacy = (url: string) => isLegacyPath(url.split('?')[0]!);
  let oauth: OAuthServer | undefined;
  // The token endpoint on the API host (spec "Limits": `{base_url}/oauth/token`, beside /api/v3): the
  // authorization server's grants with its own per-IP limits; served by `handle` when `oauth` is mounted.
  const apiTokenPath = `${basePath.endsWith('/api/v3') ? basePath.slice(0, -'/api/v3'.length) : ''}/oauth/token`;
  let apiHostToken: ((req: HttpRequest) => Promise<HttpResponse>) | undefined;
  if (o.oauth) {
    const oo = o.oauth;
    const server = createOAuthServer({
      issuer: validateIssuer(oo.issuer),
      store: o.store,
      clock,
      registry,
      grants: { d: o.store.dialect, ids, registry, permissionsOf },
      key: createHmac('sha256', cursorSecret ?? randomBytes(32)).update('pmapi oauth consent csrf').digest(),
      loopbackAnyPort: oo.loopbackAnyPort ?? false,
      // The hooks see the host framework's own request (Express's req, the fetch Request) as their second argument.
      currentMember: async (req) => oo.currentMember(req, req.hostRequest),
      signInUrl: (returnTo, req) => oo.signInUrl(returnTo, req.hostRequest),
      ...(oo.renderConsent ? { renderConsent: async (v, req) => oo.renderConsent!(v, req.hostRequest) } : {}),
      onError,
      ...(oo.tokenRateLimit === false ? {} : {
        tokenLimit: oo.tokenRateLimit ?? (o.store.dialect.capabilities.multiProcess ? sqlRateLimitStore(o.store) : memoryRateLimitStore()),
      }),
      clientIp: (req) => (o.clientIp ? o.clientIp(req) : req.remoteAddress),
    });
    oauth = {
      issuer: server.issuer,
      owns: server.owns,
      async handle(req) {
        try {
          return await server.handle(req);
        } catch (err) {
          onError(err, req);
          return { status: 500, headers: { 'content-type': 'application/json; charset=utf-8', 'cache-control': 'no-store' }, body: JSON.stringify({ error: 'server_error', error_description: 'Internal error' }) };
        }
      },
    };
    apiHostToken = async (req) => {
      try {
        return await server.handleApiHostToken(req);
      } catch (err) {
        onError(err, req);
        return { status: 500, headers: { 'content-type': 'application/json; charset=utf-8', 'cache-control': 'no-store' }, body: JSON.stringify({ error: 'server_error', error_description: 'Internal error' }) };
      }
    };
  }
  const system: Principal = {
    teamId: '', memberId: '', userId: '', memberName: 'system', role: 'system', roleId: '', permissions: new Set(), tokenId: '', scopes: new Set(), actorId: null,
  };
  const renderProblem = (code: ErrorCode, detail: string, url: string, extras: Record<string, unknown> = {}, mount?: string): HttpResponse => {
    const err = new ProblemError(code, detail, extras);
    const requestId = ids.uuid();
    const at = mount !== undefined ? { mount } : {};
    const docsBaseUrl = docsBase(at);
    // On the legacy surface every error is `{message, code}` with its three headers (spec "Errors", "Versioning").
    if (isLegacy(url)) {
      return {
        status: err.status,
        headers: { 'content-type': 'application/json; charset=utf-8', 'x-request-id': requestId, ...legacyHeaders(docsBaseUrl) },
        body: JSON.stringify(legacyErrorBody(err.status, detail)),
      };
    }
    const instance = `${mountOf(at)}${url.split('?')[0]!}`;
    return {
      status: err.status,
      headers: { 'content-type': 'application/json; charset=utf-8', 'x-request-id': requestId },
      body: JSON.stringify(problemBody(err, { instance, requestId, docsBaseUrl })),
    };
  };
  // Signed blob links (files) live under the v3 base path; everything else is the v3 API.
  const blobPrefix = `${files.mount}/`;
  // Health/readiness (issue 16): GET {basePath}/health, no authentication, one round trip to the store.
  const healthPath = `${base}/health`;
  // The OpenAPI document (issue 17): GET {basePath}/openapi.json, no authentication, built once.
  const contract = openApiServer({ registry, routes: customRoutes, extraPermissions, basePath, problem: (code, detail, req, extras) => renderProblem(code, detail, req.url, extras, req.mount) });
  // The reference pages problem `docsUrl`s and the legacy `Link` point at by default (issue 17): no authentication.
  const errorsPath = `${base}/errors`;
  const versioningPath = `${base}/versioning`;
  /** The pages are the same for every request: each rendered once, when first asked for (a known code, two formats). */
  const pages = new Map<string, string>();
  const docsPage = (req: HttpRequest, path: string): HttpResponse => {
    const method = req.method.toUpperCase();
    if (method !== 'GET' && method !== 'HEAD') {
      const r = renderProblem('method_not_allowed', `${method} is not allowed here`, req.url, { allowed: ['GET', 'HEAD'] }, req.mount);
      return { ...r, headers: { ...r.headers, allow: 'GET, HEAD' } };
    }
    const code = path === errorsPath || path === versioningPath ? undefined : decodeURIComponent(path.slice(errorsPath.length + 1));
    if (code !== undefined && !isErrorCode(code)) return renderProblem('route_not_found', `No error code '${code.slice(0, 100)}'`, req.url, {}, req.mount);
    // HTML for browsers; the same entry as Markdown (docs/errors/{code}.md) to a client that asks for it.
    const accept = String(req.headers.accept ?? '');
    const markdown = /\btext\/markdown\b/i.test(accept) && !/\btext\/html\b/i.test(accept);
    const key = `${markdown ? 'md' : 'html'} ${path === versioningPath ? 'versioning' : code ?? ''}`;
    let body = pages.get(key);
    if (body === undefined) {
      body = path === versioningPath
        ? (markdown ? versioningMarkdown() : versioningHtml())
        : code === undefined ? (markdown ? errorIndexMarkdown() : errorIndexHtml()) : markdown ? errorReferenceMarkdown(code) : errorReferenceHtml(code);
      pages.set(key, body);
    }
    return {
      status: 200,
      headers: { 'content-type': markdown ? 'text/markdown; charset=utf-8' : 'text/html; charset=utf-8', 'cache-control': 'public, max-age=3600', vary: 'accept' },
      ...(method === 'HEAD' ? {} : { body }),
    };
  };
  const isDocsPath = (path: string) => path === errorsPath || path === versioningPath || (path.startsWith(`${errorsPath}/`) && !path.slice(errorsPath.length + 1).includes('/'));
  const health = async (req: HttpRequest): Promise<HttpResponse> => {
    const method = req.method.toUpperCase();
    if (method !== 'GET' && method !== 'HEAD') {
      const r = renderProblem('method_not_allowed', `${method} is not allowed here`, req.url, { allowed: ['GET', 'HEAD'] }, req.mount);
      return { ...r, headers: { ...r.headers, allow: 'GET, HEAD' } };
    }
    let ok = true;
    try {
      await pingStore(o.store.db);
    } catch {
      ok = false;
    }
    const headers: Record<string, string> = { 'content-type': 'application/json; charset=utf-8', 'cache-control': 'no-store', ...(ok ? {} : { 'retry-after': '1' }) };
    return { status: ok ? 200 : 503, headers, ...(method === 'HEAD' ? {} : { body: JSON.stringify({ status: ok ? 'ok' : 'unavailable' }) }) };
  };
  const route = async (req: HttpRequest): Promise<HttpResponse> => {
    const q = req.url.indexOf('?');
    const path = q === -1 ? req.url : req.url.slice(0, q);
    if (path === healthPath) return health(req);
    if (path === contract.path) return contract.serve(req);
    if (isDocsPath(path)) {
      try {
        return docsPage(req, path);
      } catch {
        return renderProblem('route_not_found', 'No such page', req.url, {}, req.mount);
      }
    }
    if (apiHostToken && path === apiTokenPath) return apiHostToken(req);
    if (isLegacyPath(path)) return legacyHandle(req);
    if (!req.url.startsWith(blobPrefix)) return v3Handle(req);
    try {
      return await serveBlob(req, files, clock, o.store.db, (code, detail, extras) => renderProblem(code, detail, req.url, extras, req.mount));
    } catch (err) {
      onError(err, req);
      return renderProblem('internal_error', errorCodes.internal_error.title, req.url, {}, req.mount);
    }
  };
  const onRequest = o.onRequest;
  /**
   * The per-request hook around a handler: one event per answered request, for every surface the front ends
   * serve (v3, legacy v1.0, health, blob links, reference pages, the API-host token endpoint and, through
   * `oauth.handle`, the OAuth server).
   */
  const observed = (inner: (req: HttpRequest) => Promise<HttpResponse>, fixedRoute: (path: string) => string | undefined) => !onRequest ? inner : async (req: HttpRequest): Promise<HttpResponse> => {
    const started = performance.now();
    const note = observeRequest(req);
    const res = await inner(req);
    const fixed = fixedRoute(req.url.split('?')[0]!);
    try {
      onRequest({
        method: req.method.toUpperCase(),
        route: fixed ?? note.route ?? null,
        status: res.status,
        durationMs: performance.now() - started,
        requestId: res.headers['x-request-id'] ?? null,
        workspace: note.workspace || null,
      });
    } catch (err) {
      onError(err, req);
    }
    return res;
  };
  const observe = (req: HttpRequest, res: HttpResponse, startedAt: number): void => {
    if (!onRequest) return;
    try {
      onRequest({ method: req.method.toUpperCase(), route: null, status: res.status, durationMs: performance.now() - startedAt, requestId: res.headers['x-request-id'] ?? null, workspace: null });
    } catch (err) {
      onError(err, req);
    }
  };
  const handle = observed(route, (path) => {
    if (path === healthPath || path === errorsPath || path === versioningPath) return path;
    if (isDocsPath(path)) return `${errorsPath}/{code}`;
    if (path === apiTokenPath && apiHostToken) return apiTokenPath;
    return path.startsWith(blobPrefix) && !isLegacyPath(path) ? `${files.mount}/{key}` : undefined;
  });
  // The OAuth server's paths are a fixed set (discovery, authorize, token): the path is the route.
  if (oauth) {
    const server = oauth;
    oauth = { ...server, handle: observed((req) => server.handle(req), (path) => (server.owns(path) ? path : undefined)) };
  }
  return {
    handle,
    ...(oauth ? { oauth } : {}),
    basePath: base,
    admin: new Admin(o.store, clock, ids, o.defaultLabels ?? ['Bug', 'Feature', 'Urgent'], registry, engine),
    jobs: {
      async purge() {
        const purged = await engine.purge(system);
        const keys = await sweepKeys(o.store.db, o.store.dialect, clock.now());
        const rateLimits = (limiter?.sweep ? await limiter.sweep(clock.now()) : 0) + (legacyLimiter?.sweep ? await legacyLimiter.sweep(clock.now()) : 0);
        const oauth = await sweepOAuth(o.store, clock.now());
        const uploads = await sweepUploads(o.store, engine, clock.now());
        return { purged, keys, rateLimits, oauth, uploads };
      },
      processFiles: (limit) => runFileJobs(engine, o.store, system, limit),
      reminders: (opts) => runRemindersJob(engine, o.store, system, opts),
      // Unexpected errors of a rule go to onError (with a stand-in request naming the job); the run goes on.
      recurring: (limit) => runRecurringJob(engine, o.store, system, limit, (err) => onError(err, { method: 'JOB', url: 'jobs.recurring', headers: {} })),
    },
    routes: () => routeTable(registry, customRoutes, extraPermissions),
    permissions: catalog,
    openapi: () => contract.document(),
    problem: renderProblem,
    observe,
    registry,
    store: o.store,
    clock,
    close: () => o.store.close(),
  };
}

/**
 * A request to a signed blob link. The link's GET goes to the store's own
 * presigned URL where the store hands them out (a redirect, so bytes never
 * pass through here), else pmapi serves the bytes itself; uploads through
 * pmapi's links are stored with `put`.
 */
async function serveBlob(req: HttpRequest, files: FileServices, clock: Clock, db: Kysely<any>, problem: (code: ErrorCode, detail: string, extras?: Record<string, unknown>) => HttpResponse): Promise<HttpResponse> {
  if (!files.store) return problem('service_unavailable', 'File storage is not configured on this server');
  const method = req.method.toUpperCase();
  if (method === 'PUT') {
    // An upload link writes only until its file is registered: afterwards the bytes are the file's.
    const q = req.url.indexOf('?');
    const key = (q < 0 ? req.url : req.url.slice(0, q)).slice(files.mount.length + 1);
    if (BLOB_KEY_PATTERN.test(key) && !(await uploadOpen(db, key))) return problem('link_invalid', 'This upload link no longer takes bytes: its file is registered, or it was never handed out');
  }
  if ((method === 'GET' || method === 'HEAD') && files.store.presignDownload) {
    const q = req.url.indexOf('?');
    // Keys are letters, digits, `-`, `_` and `/`: nothing to decode (a `%` makes the link invalid).
    const key = (q < 0 ? req.url : req.url.slice(0, q)).slice(files.mount.length + 1);
    const nowS = Math.floor(clock.now() / 1000);
    const check = verifyBlobLink(files.secret, { key, query: new URLSearchParams(q < 0 ? '' : req.url.slice(q + 1)) }, nowS);
    if (check.ok && check.link.op === 'get') {
      const location = await files.store.presignDownload(key, {
        expiresInSeconds: Math.max(60, check.link.expiresAt - nowS), fileName: check.link.fileName ?? 'download', disposition: safeDisposition(check.link.fileName, check.link.disposition),
        contentType: contentTypeOf(check.link.fileName),
      });
      return { status: 302, headers: { location, 'cache-control': 'private, no-store' } };
    }
  }
  return serveBlobRequest(req, { store: files.store, secret: files.secret, nowMs: () => clock.now(), mount: files.mount, problem });
}
