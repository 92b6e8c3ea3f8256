import { clip, notFound, ProblemError, problemBody, validationError } from '../errors/problem';
import { errorCodes } from '../errors/codes';
import { isId } from '../ids/index';
import type { Resource } from '../resources/define-resource';
import type { Engine, OpResult } from '../services/engine';
import type { Principal, WriteContext as WriteContextT } from '../services/context';
import { authenticate, bearerOf, type PermissionResolver, type TokenLookup } from '../auth/tokens';
import type { RateLimiter } from '../limits/index';
import { compileRoutes, type CustomRoute, type ExtraPermissions } from './routes';
import { grants, type ScopeAction } from '../auth/scopes';
import { runMutation } from '../services/mutation';
import type { HttpRequest, HttpResponse } from './types';
import { piecewiseResponse } from './response';
import { parseListQuery, parseReadQuery, type ReadPlan } from '../query/parse';
import { parseJsonBody, OversizedArray } from './body';
import { v3, type Outcome } from '../presenters/v3';
import { noteRequest } from './observe';
import { mountOf } from './mount';

export interface HandlerOptions {
  basePath: string;
  /** Base of a request's problem `docsUrl` links (`{base}/errors/{code}`); per request, since the default follows the mount. */
  docsBase: (req: HttpRequest) => string;
  /** Called with unexpected errors (they answer 500 without details). */
  onError: (err: unknown, req: HttpRequest) => void;
  /** Routes beyond the standard operations, matched first. */
  routes: readonly CustomRoute[];
  /** The role permissions a member holds. */
  permissionsOf: PermissionResolver;
  /** How a token's row is read (default: tokenByPrefix each time). */
  tokenLookup?: TokenLookup;
  /** Role permissions a standard operation needs beyond its scope. */
  extraPermissions: ExtraPermissions;
  /** Rate limits (absent: none). */
  limiter?: RateLimiter;
  /** The client address of a request (default: `req.remoteAddress`). */
  clientIp?: (req: HttpRequest) => string | undefined;
}

/**
 * Let a principal in, or fail with 403 permission_denied naming what is
 * missing: the token's scope, the role's permission of the same name, and any
 * extra role permissions the route declares. Breadth follows the role, not the token.
 * `scopeOnly` (routes on the caller's own records) checks the token's scope alone.
 */
export function authorize(principal: Principal, resource: string, action: ScopeAction, extra: readonly string[] = [], scopeOnly = false): void {
  const missing = new Set<string>();
  if (!grants(principal.scopes, resource, action) || (!scopeOnly && !grants(principal.permissions, resource, action))) missing.add(`${resource}:${action}`);
  for (const p of extra) if (!principal.permissions.has(p)) missing.add(p);
  if (missing.size) {
    const tokenOnly = (scopeOnly || grants(principal.permissions, resource, action)) && !grants(principal.scopes, resource, action);
    throw new ProblemError('permission_denied', tokenOnly ? `This token lacks the ${resource}:${action} scope` : `Missing permission: ${[...missing].join(', ')}`, {
      missingPermissions: [...missing],
    });
  }
}

type Op =
  | { kind: 'list' | 'create' }
  | { kind: 'get' | 'update' | 'remove' | 'restore'; id: string }
  | { kind: 'relation'; id: string; relation: string; change: 'add' | 'remove' };

const ACTION: Record<Op['kind'], ScopeAction> = {
  list: 'read', get: 'read', create: 'write', update: 'write', remove: 'delete', restore: 'delete', relation: 'write',
};

/** An operation without a body accepts none, or `{}`; anything else is refused naming what was sent. */
function assertNoBody(body: unknown): void {
  if (body === undefined) return;
  if (body !== null && typeof body === 'object' && !Array.isArray(body) && !(body instanceof OversizedArray)) {
    const keys = Object.keys(body);
    if (keys.length === 0) return;
    throw validationError(keys.map((k) => ({ field: k, code: 'unrecognized_key', message: 'this operation takes no body' })));
  }
  throw validationError([{ field: '', code: 'invalid_type', message: 'this operation takes no body' }]);
}

const NO_VIEW: ReadPlan = { expand: { children: new Map() }, fields: new Map() };

/** Longest request URL (path and query) handled. */
export const MAX_URL_LENGTH = 16 * 1024;

const JSON_TYPE = 'application/json; charset=utf-8';

/**
 * An answer's headers: its content type (JSON, or none), the request id, then
 * each of `more`'s in turn, later ones replacing earlier ones — what
 * `{ 'content-type': …, 'x-request-id': id, ...a, ...b }` gives, built from a
 * literal and plain stores: V8 copies every spread after the first property
 * by property through its runtime (1.8 µs for an answer with the limiter's
 * three headers, against 0.25 µs).
 */
function answerHeaders(json: boolean, requestId: string, ...more: Array<Record<string, string> | undefined>): Record<string, string> {
  const h: Record<string, string> = json ? { 'content-type': JSON_TYPE, 'x-request-id': requestId } : { 'x-request-id': requestId };
  for (const m of more) for (const k in m) h[k] = m[k]!;
  return h;
}

function header(req: HttpRequest, name: string): string | undefined {
  const v = req.headers[name];
  return Array.isArray(v) ? v[0] : v;
}

/** Decide which operation a method and path mean, or fail with 404/405. */
function route(res: Resource, method: string, segs: string[]): Op {
  const allow = (methods: string[]) => new ProblemError('method_not_allowed', `${method} is not allowed here`, { allowed: methods }, { allow: methods.join(', ') });
  const ops = res.operations;
  if (segs.length === 0) {
    const methods = [ops.list && 'GET', ops.create && 'POST'].filter(Boolean) as string[];
    if (method === 'GET' && ops.list) return { kind: 'list' };
    if (method === 'POST' && ops.create) return { kind: 'create' };
    throw allow(methods);
  }
  // A malformed id is answered like an unknown one: the lookup (Repo.get) finds nothing without running a statement.
  const id = segs[0]!;
  if (segs.length === 1) {
    const methods = [ops.get && 'GET', ops.update && 'PATCH', ops.delete && 'DELETE'].filter(Boolean) as string[];
    if (method === 'GET' && ops.get) return { kind: 'get', id };
    if (method === 'PATCH' && ops.update) return { kind: 'update', id };
    if (method === 'DELETE' && ops.delete) return { kind: 'remove', id };
    throw allow(methods);
  }
  const sub = segs[1]!;
  if (segs.length === 2 && sub === 'restore' && res.softDelete) {
    if (method === 'POST') return { kind: 'restore', id };
    throw allow(['POST']);
  }
  if (segs.length === 2) {
    if (method === 'POST') return { kind: 'relation', id, relation: sub, change: 'add' };
    if (method === 'DELETE') return { kind: 'relation', id, relation: sub, change: 'remove' };
    throw allow(['POST', 'DELETE']);
  }
  if (segs.length === 3 && segs[2] === 'remove') {
    if (method === 'POST') return { kind: 'relation', id, relation: sub, change: 'remove' };
    throw allow(['POST']);
  }
  throw new ProblemError('route_not_found', `No route ${method} ${segs.join('/')} on ${res.path}`);
}

function parseBody(req: HttpRequest): unknown {
  const raw = req.body;
  if (raw === undefined || raw.length === 0) return undefined;
  const ct = (header(req, 'content-type') ?? '').toLowerCase();
  const mime = ct.split(';')[0]!.trim();
  if (mime !== 'application/json' && !/^application\/[a-z0-9.+-]+\+json$/.test(mime)) {
    throw new ProblemError('unsupported_media_type', 'Send the body as application/json', { contentType: clip(ct, 200) || null });
  }
  return parseJsonBody(raw);
}

/**
 * The v3 request pipeline over plain records: authenticate → route →
 * authorise scope → validate → run (writes in one transaction, with
 * idempotency and the outbox) → serialise → respond.
 */
export function createHandler(engine: Engine, o: HandlerOptions): (req: HttpRequest) => Promise<HttpResponse> {
  const { registry } = engine.config;
  const store = engine.store;
  const prefix = o.basePath.replace(/\/$/, '');
  const matchCustom = compileRoutes(o.routes);

  return async function handle(req: HttpRequest): Promise<HttpResponse> {
    // Paths written back (instance, Link) are the client's: the host's mount prefix first.
    const mount = mountOf(req);
    const problem = (err: ProblemError, instance: string, requestId: string, extraHeaders?: Record<string, string>): HttpResponse => ({
      status: err.status,
      headers: answerHeaders(true, requestId, extraHeaders, err.headers),
      body: JSON.stringify(problemBody(err, { instance: `${mount}${instance}`, requestId, docsBaseUrl: o.docsBase(req) })),
    });
    const given = header(req, 'x-request-id');
    const requestId = given && /^[\x21-\x7e]{1,128}$/.test(given) ? given : engine.config.ids.uuid();
    // Work on the URL is bounded: Node's own request line limit is 16 KiB, and in-process callers get the same.
    if (req.url.length > MAX_URL_LENGTH) {
      const cut = req.url.slice(0, 200);
      return problem(new ProblemError('invalid_query_param', `The URL is longer than ${MAX_URL_LENGTH} characters`, { name: null, allowed: `a URL of at most ${MAX_URL_LENGTH} characters` }), cut.split('?')[0]!, requestId);
    }
    const qIndex = req.url.indexOf('?');
    const path = qIndex === -1 ? req.url : req.url.slice(0, qIndex);
    const extra: Record<string, string> = {};
    /** The limiter's X-RateLimit-* headers once it admitted the request (kept apart from `extra`: an object of one shape, spread as it is). */
    let limited: Record<string, string> | undefined;
    /** Every header the answer carries beside its own: the limiter's, then `extra`. */
    const besides = (): Record<string, string> => (limited ? { ...limited, ...extra } : extra);
    /** The rate limiter's count of this request while it is not settled (`admitted`). */
    let counting: Promise<Record<string, string>> | undefined;
    /** Wait for the limiter's verdict: its headers, or its 429. */
    const admitted = async (): Promise<void> => {
      if (!counting) return;
      const c = counting;
      counting = undefined;
      limited = await c;
    };
    /**
     * A read's answer once the limiter admits the request. A read started
     * before the verdict (the limiter had room: a plain read of what the
     * caller may see, no write, no lock) is dropped should the count refuse.
     */
    const read = async <T>(pending: Promise<T>): Promise<T> => {
      if (counting) {
        // A read that fails before the count answers (a 404) is held here, never left unhandled meanwhile;
        // on a refusal its outcome is dropped.
        pending.catch(() => undefined);
        await admitted();
      }
      return pending;
    };
    /** The v3 presentation of an operation's result: status, headers, JSON body. */
    const respond = (out: OpResult): HttpResponse => {
      if (out.text === undefined && out.body === undefined) return { status: out.status, headers: answerHeaders(false, requestId, limited, extra, out.headers) };
      const headers = answerHeaders(true, requestId, limited, extra, out.headers);
      if (typeof out.text === 'string') return { status: out.status, headers, body: out.text };
      if (out.text !== undefined) return piecewiseResponse(out.status, headers, out.text);
      return { status: out.status, headers, body: JSON.stringify(out.body) };
    };
    try {
      if (path !== prefix && !path.startsWith(`${prefix}/`)) throw new ProblemError('route_not_found', `No route ${path}`);
      const method = req.method.toUpperCase();
      let query: URLSearchParams;
      try {
        query = new URLSearchParams(qIndex === -1 ? '' : req.url.slice(qIndex + 1));
      } catch {
        throw new ProblemError('invalid_query_param', 'The query string is malformed', { name: null, allowed: null });
      }
      const segs = path.slice(prefix.length).split('/').filter((s) => s !== '').map((s) => {
        try {
          return decodeURIComponent(s);
        } catch {
          return s;
        }
      });
      const now = engine.config.clock.now();
      const principal = await authenticate(store.reads ?? store.db, store.dialect, bearerOf(req.headers.authorization), now, o.permissionsOf, o.tokenLookup);
      principal.clientIp = o.clientIp ? o.clientIp(req) : req.remoteAddress;
      if (mount) principal.mount = mount;
      noteRequest(req, { workspace: principal.teamId });
      if (o.limiter) {
        const input = { tokenId: principal.tokenId, method, clientIp: principal.clientIp, now };
        // Answered at once where the limiter can (its refusal thrown here), else counted while the request waits.
        limited = o.limiter.checkNow?.(input);
        if (!limited) {
          counting = o.limiter.check(input);
          // Its refusal is taken up where it is awaited (admitted), never left unhandled meanwhile.
          counting.catch(() => undefined);
          // A read may go ahead while the request is counted where the limiter's last count left room (see read below);
          // anything else waits for the count.
          if (!((method === 'GET' || method === 'HEAD') && o.limiter.hasRoom?.(input))) await admitted();
        }
      }
      if (segs.length === 0) throw new ProblemError('route_not_found', 'Name a resource: /api/v3/{resource}');
      const match = matchCustom(method, segs);
      if (match) {
        // A custom route runs the host's code: it waits for the count.
        await admitted();
        return respond(await customRoute(req, method, principal, query, match));
      }
      let res = registry.byPath.get(segs[0]!);
      if (!res) {
        const current = registry.retiredPaths.get(segs[0]!);
        if (current) {
          res = registry.byPath.get(current)!;
          extra.deprecation = 'true';
          extra.link = `<${mount}${prefix}/${current}>; rel="successor-version"`;
        }
      }
      if (!res) {
        throw new ProblemError('resource_unknown', `Unknown resource '${segs[0]}'`, { resource: segs[0], available: [...registry.byPath.keys()] });
      }
      const op = route(res, method, segs.slice(1));
      noteRequest(req, { route: `${prefix}/${res.path}${op.kind === 'list' || op.kind === 'create' ? '' : op.kind === 'restore' ? '/{id}/restore' : op.kind === 'relation' ? `/{id}/${op.relation}${segs.length === 4 ? '/remove' : ''}` : '/{id}'}` });
      const action = ACTION[op.kind];
      // Personal records (`ownedBy`): every member manages their own, so only the token's scope counts.
      authorize(principal, res.path, action, o.extraPermissions(res.path, action), !!res.ownedBy);
      // The query is parsed here, at the edge: a bad one is refused before any transaction or idempotency claim.
      if (op.kind === 'list') {
        const parsed = parseListQuery(query, { res, registry, teamId: principal.teamId, now, cursorSecret: engine.config.cursorSecret, memberId: principal.memberId, permissions: principal.permissions });
        return respond(v3(await read(engine.list(engine.readContext(principal), res, parsed))));
      }
      // DELETE answers 204 without a body: its query is not read (as before).
      const view = op.kind === 'remove' ? NO_VIEW : parseReadQuery(query, res, registry);
      if (op.kind === 'get') return respond(v3(await read(engine.get(engine.readContext(principal), res, op.id, view))));
      await admitted();
      return respond(await write(req, res, op, principal, view));
    } catch (caught) {
      let err = caught;
      // A request the limiter refuses is answered 429 whatever else went wrong after authentication.
      if (counting) {
        try {
          await admitted();
        } catch (refused) {
          err = refused;
        }
      }
      if (err instanceof ProblemError) return problem(err, path, requestId, err.code === 'rate_limited' ? {} : besides());
      if (store.dialect.isUniqueViolation(err)) {
        return problem(new ProblemError('conflict', 'The change collides with an existing record'), path, requestId, besides());
      }
      if (store.dialect.isUnavailable(err)) {
        return problem(new ProblemError('service_unavailable', 'The database is unavailable; retry shortly', {}, { 'retry-after': '1' }), path, requestId, besides());
      }
      // A resource whose storage does not match its declaration (registered without its migration): the
      // transaction rolled back; the operator hears of it, the client learns a retry will not help.
      if (store.dialect.isSchemaMismatch?.(err)) {
        o.onError(err, req);
        return problem(new ProblemError('resource_misconfigured', 'The server cannot process this resource (its storage does not match its declaration); retrying will not help'), path, requestId, besides());
      }
      o.onError(err, req);
      return problem(new ProblemError('internal_error', errorCodes.internal_error.title), path, requestId, besides());
    }
  };

  /** Run the custom route that `m` matched (or refuse the method it does not allow). */
  async function customRoute(req: HttpRequest, method: string, principal: Principal, query: URLSearchParams, m: NonNullable<ReturnType<typeof matchCustom>>): Promise<OpResult> {
    if ('allowed' in m) throw new ProblemError('method_not_allowed', `${method} is not allowed here`, { allowed: m.allowed }, { allow: m.allowed.join(', ') });
    const { route: r, params } = m;
    noteRequest(req, { route: `${prefix}/${r.path}` });
    authorize(principal, r.scope.resource, r.scope.action, r.permissions, r.ownRecords);
    const check = (body: unknown) => {
      if (r.noBody) assertNoBody(body);
      for (const id of Object.values(params)) if (!isId(id)) throw notFound(r.subject ?? 'record', id);
    };
    const run = (ctx: WriteContextT, body: unknown, prepared?: unknown) => {
      check(body);
      return r.run(ctx, { params, query, body, prepared, engine });
    };
    if (!r.write) return run(engine.writeContext(principal, store.db, []), r.noBody ? parseBody(req) : undefined);
    if (!r.prepare) return runWrite(req, principal, run);
    const body = parseBody(req);
    check(body);
    const readCtx = engine.readContext(principal);
    const prepared = await r.prepare(readCtx, { params, query, body });
    let out: OpResult;
    try {
      out = await runWrite(req, principal, (ctx, b) => run(ctx, b, prepared));
    } catch (err) {
      await r.discard?.(readCtx, prepared).catch(() => undefined);
      throw err;
    }
    if (out.headers?.['idempotency-replayed']) await r.discard?.(readCtx, prepared).catch(() => undefined);
    return out;
  }

  async function write(req: HttpRequest, res: Resource, op: Op, principal: Principal, view: ReadPlan): Promise<OpResult> {
    // The v3 answer is made inside the transaction: the idempotency record stores it (or its replay form).
    return runWrite(req, principal, async (ctx, body) => {
      let r: Outcome;
      switch (op.kind) {
        case 'create':
          r = await engine.create(ctx, res, body, view);
          break;
        case 'update':
          r = await engine.update(ctx, res, op.id, body, view);
          break;
        case 'remove':
          r = await engine.remove(ctx, res, op.id);
          break;
        case 'restore':
          r = await engine.restore(ctx, res, op.id, view);
          break;
        case 'relation':
          r = await engine.relation(ctx, res, op.id, op.relation, op.change, body, view);
          break;
        default:
          throw new Error('unreachable');
      }
      return v3(r);
    });
  }

  /** A mutation: one transaction holding the change, its events and its idempotency record. */
  async function runWrite(req: HttpRequest, principal: Principal, op: (ctx: WriteContextT, body: unknown) => Promise<OpResult>): Promise<OpResult> {
    return runMutation(engine, principal, { method: req.method, url: req.url, body: parseBody(req), idempotencyKey: header(req, 'idempotency-key') }, op);
  }
}
