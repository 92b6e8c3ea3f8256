import { clip, notFound, ProblemError, validationError, type FieldError } from '../errors/problem';
import { errorCodes } from '../errors/codes';
import { isId } from '../ids/index';
import type { Resource } from '../resources/define-resource';
import type { Engine, OpResult } from '../services/engine';
import type { Principal, ReadContext, WriteContext } from '../services/context';
import { authenticate, bearerOf, type PermissionResolver, type TokenLookup } from '../auth/tokens';
import type { ExtraPermissions } from './routes';
import { grants, type ScopeAction } from '../auth/scopes';
import { runMutation } from '../services/mutation';
import type { HttpRequest, HttpResponse } from './types';
import { partsText } from './response';
import { parseListQuery, type ReadPlan } from '../query/parse';
import { parseJsonBody, OversizedArray } from './body';
import { noteRequest } from './observe';
import { mountOf } from './mount';
import type { Outcome } from '../presenters/v3';
import {
  LEGACY_PREFIX, appOf, appScopes, labelOf, legacyErrorBody, legacyHeaders, legacyRecord, legacyWrite, subteamOf, type LegacyReadSegment,
} from '../presenters/legacy';
import { appFamilyScopes, membersOfActors, workspaceApps } from '../sql/queries/legacy';
import { clampScopes } from '../oauth/scopes';
import type { Registry } from '../resources/registry';

/*
 * The legacy v1.0 pipeline (spec "Legacy v1.0 endpoints", "Authentication",
 * "Errors", "Versioning"; issue 15): a second presenter over the operations v3
 * runs. authenticate → rate limit (legacy limiter, when plugged in) → legacy
 * scope check (segment + method) → route (404/405) → role permission (as the
 * v3 operation asks) → the engine operation (writes: one transaction with
 * events and idempotency, exactly as v3) → legacy shape. Every answer, errors
 * included, carries Deprecation, Sunset and Link; every error is `{message, code}`.
 * Decisions on what the spec leaves open: docs/not-shown.md "Legacy v1.0 surface".
 */

/**
 * The legacy rate limiter (spec "Limits", legacy table; built separately in
 * limits/legacy.ts): answers the headers of an admitted request, or throws
 * (a ProblemError `rate_limited` with `Retry-After`, rendered `{message, code: 429}`).
 */
export interface LegacyRateLimiter {
  check(a: { tokenId: string; method: string; path: string; clientIp: string | undefined; now: number }): Promise<Record<string, string> | void> | Record<string, string> | void;
}

export interface LegacyHandlerOptions {
  /** Base of the versioning page the `Link` header names (`{base}/versioning`); per request, since the default follows the mount. */
  docsBase: (req: HttpRequest) => string;
  onError: (err: unknown, req: HttpRequest) => void;
  permissionsOf: PermissionResolver;
  /** How a token's row is read (default: tokenByPrefix each time). */
  tokenLookup?: TokenLookup;
  extraPermissions: ExtraPermissions;
  clientIp?: (req: HttpRequest) => string | undefined;
  /** The legacy rate limiter (absent: none). */
  legacyLimiter?: LegacyRateLimiter;
}

/**
 * Segments fine-grained scopes cover (spec "Authentication" rule 3), by the v3
 * scope resource each stands for. Every other segment needs a macro.
 */
export const LEGACY_SCOPE_RESOURCE: Readonly<Record<string, string>> = {
  tasks: 'tasks',
  projects: 'projects',
  docs: 'documents',
  labels: 'labels',
  members: 'members',
};

/** The v3 scope resource a legacy segment stands for (own keys only: `/constructor` is no segment). */
function scopeResourceOf(segment: string | undefined): string | undefined {
  return segment !== undefined && Object.hasOwn(LEGACY_SCOPE_RESOURCE, segment) ? LEGACY_SCOPE_RESOURCE[segment] : undefined;
}

/**
 * The scope action of a legacy request (rule 2): GET read, DELETE delete,
 * everything else write. One exception: `DELETE /subteams/{id}/members` runs
 * the v3 roster removal, which v3 gates on `write` (a relation change, not a
 * deletion), so it needs what v3 needs: `write` (a delete-only token is 403).
 */
export function legacyAction(method: string, segs: readonly string[] = []): ScopeAction {
  if (method === 'GET' || method === 'HEAD') return 'read';
  if (method === 'DELETE') return segs.length === 3 && segs[0] === 'subteams' && segs[2] === 'members' ? 'write' : 'delete';
  return 'write';
}

/**
 * Does a token's scope set let it call `method` on `segs` (the path after
 * /api/v1.0)? A macro covers every segment (write implies read); a
 * fine-grained scope covers only the collection and item routes of the five
 * covered segments (`/tasks`, `/tasks/{id}`), never a deeper route.
 * `holdsMacro` says whether the token holds a macro (see {@link macroHolder}).
 */
export function legacyScopeCovers(scopes: ReadonlySet<string>, method: string, segs: readonly string[], holdsMacro: (a: ScopeAction) => boolean = (a) => scopes.has(a)): boolean {
  const action = legacyAction(method, segs);
  if (holdsMacro(action) || (action === 'read' && holdsMacro('write'))) return true;
  const resource = scopeResourceOf(segs[0]);
  if (!resource || segs.length > 2) return false;
  return grants(scopes, resource, action);
}

/**
 * Whether a principal's token holds the macro `action`: literally (a personal
 * access token keeps `read`), or, for an OAuth token, when its consent asked
 * for the macro (`oauthMacros`, stored on the grant family) and the token
 * still holds, in the expanded form a grant stores (macros expanded and
 * clamped to the role at consent: oauth/scopes.ts), every
 * `<resource>:<action>` the macro clamped to the member's role gives. A
 * consent for `labels:read` never makes a macro holder, even for a role that
 * grants nothing else. Families from before the macros were stored are judged
 * by the expanded scopes alone.
 */
export function macroHolder(registry: Registry): (p: Principal, action: ScopeAction) => boolean {
  const cache = new WeakMap<ReadonlySet<string>, Map<ScopeAction, string[]>>();
  return (p, action) => {
    if (p.scopes.has(action)) return true;
    if (p.via !== 'oauth') return false;
    if (p.oauthMacros && !p.oauthMacros.has(action)) return false;
    let byAction = cache.get(p.permissions);
    if (!byAction) cache.set(p.permissions, (byAction = new Map()));
    let full = byAction.get(action);
    if (!full) byAction.set(action, (full = clampScopes(registry, [action], p.permissions).filter((s) => s.endsWith(`:${action}`))));
    return full.length > 0 && full.every((s) => p.scopes.has(s));
  };
}

/** Legacy page bounds: `limit` 1-200 (default 50, larger clamped, as v3), `offset` 0-10,000 (default 0). */
export const LEGACY_MAX_LIMIT = 200;
export const LEGACY_DEFAULT_LIMIT = 50;
export const LEGACY_MAX_OFFSET = 10_000;
/** Longest legacy request body, bytes (the v3 front end's default). */
export const LEGACY_BODY_LIMIT = 4 * 1024 * 1024;
const MAX_URL_LENGTH = 16 * 1024;

/**
 * Every route the legacy pipeline serves, `METHOD /path` (`{id}` one id
 * segment), in its order. The surface is frozen (spec "Versioning"): the
 * handler refuses to build when its route table differs, and the golden tests
 * (conformance `suites/legacy-golden.ts`) compare their own list with this one.
 */
export const LEGACY_ROUTES: readonly string[] = [
  'GET /subteams', 'POST /subteams', 'GET /subteams/{id}', 'PUT /subteams/{id}', 'DELETE /subteams/{id}',
  'PUT /subteams/{id}/members', 'DELETE /subteams/{id}/members', 'POST /subteams/{id}/leave',
  'GET /apps', 'GET /apps/{id}',
  'GET /labels', 'POST /labels', 'GET /labels/{id}', 'PUT /labels/{id}', 'DELETE /labels/{id}',
  'GET /tasks', 'GET /tasks/{id}', 'GET /projects', 'GET /projects/{id}', 'GET /docs', 'GET /docs/{id}', 'GET /members', 'GET /members/{id}',
];

/** Methods the pipeline authenticates and routes (HEAD is routed, and counted, as a read); any other is 405 before authentication. */
const SERVED_METHODS: ReadonlySet<string> = new Set(['GET', 'HEAD', 'POST', 'PUT', 'DELETE']);
const JSON_HEADERS = { 'content-type': 'application/json; charset=utf-8' };
const NO_VIEW: ReadPlan = { expand: { children: new Map() }, fields: new Map() };

function header(req: HttpRequest, name: string): string | undefined {
  const v = req.headers[name];
  return Array.isArray(v) ? v[0] : v;
}

function badParam(name: string, message: string): ProblemError {
  return validationError([{ field: name, code: 'invalid_query_param', message }], `${name}: ${message}`);
}

/** A non-negative integer query value within bounds, or the default; anything else 400. */
function intParam(query: URLSearchParams, name: string, o: { min: number; max: number; def?: number; clampAbove?: boolean }): number {
  const all = query.getAll(name);
  if (all.length === 0) {
    if (o.def === undefined) throw badParam(name, 'is required');
    return o.def;
  }
  if (all.length > 1) throw badParam(name, 'is given more than once');
  const raw = all[0]!;
  if (!/^\d{1,9}$/.test(raw)) throw badParam(name, `must be an integer from ${o.min} to ${o.max}`);
  const n = Number(raw);
  if (n < o.min) throw badParam(name, `must be an integer from ${o.min} to ${o.max}`);
  if (n > o.max) {
    if (o.clampAbove) return o.max;
    throw badParam(name, `must be an integer from ${o.min} to ${o.max}`);
  }
  return n;
}

/** A query parameter given at most once and never empty (undefined when absent); anything else 400. */
function oneParam(query: URLSearchParams, name: string): string | undefined {
  const all = query.getAll(name);
  if (all.length > 1) throw badParam(name, 'is given more than once');
  if (all.length === 1 && all[0] === '') throw badParam(name, 'must not be empty');
  return all[0];
}

/** Refuse query parameters a route does not read. */
function onlyParams(query: URLSearchParams, allowed: readonly string[]): void {
  for (const k of new Set(query.keys())) {
    if (!allowed.includes(k)) throw badParam(k, allowed.length ? `is not a parameter of this route (allowed: ${allowed.join(', ')})` : 'is not a parameter of this route');
  }
}

function paging(query: URLSearchParams, required = false): { limit: number; offset: number } {
  return {
    limit: intParam(query, 'limit', { min: 1, max: LEGACY_MAX_LIMIT, clampAbove: true, ...(required ? {} : { def: LEGACY_DEFAULT_LIMIT }) }),
    offset: intParam(query, 'offset', { min: 0, max: LEGACY_MAX_OFFSET, ...(required ? {} : { def: 0 }) }),
  };
}

/** A body that must be a JSON object; its keys checked against `allowed` (read-only ones in `ignored` dropped). */
function objectBody(body: unknown, allowed: readonly string[], ignored: readonly string[] = []): Record<string, unknown> {
  if (body === undefined) return {};
  if (body === null || typeof body !== 'object' || Array.isArray(body) || body instanceof OversizedArray) {
    throw validationError([{ field: '', code: 'invalid_type', message: 'the body must be a JSON object' }]);
  }
  const out: Record<string, unknown> = {};
  const errors: FieldError[] = [];
  for (const [k, v] of Object.entries(body)) {
    if (allowed.includes(k)) out[k] = v;
    else if (!ignored.includes(k)) errors.push({ field: clip(k, 100), code: 'unrecognized_key', message: `is not a field of this body (fields: ${allowed.join(', ')})` });
  }
  if (errors.length) throw validationError(errors);
  return out;
}

/** `members_ids`: a required array of ids. */
function membersIds(body: unknown): string[] {
  const b = objectBody(body, ['members_ids']);
  const ids = b.members_ids;
  if (ids instanceof OversizedArray) throw new ProblemError('batch_too_large', 'members_ids holds too many ids', { max: 150, received: ids.length });
  if (!Array.isArray(ids)) throw validationError([{ field: 'members_ids', code: ids === undefined ? 'required' : 'invalid_type', message: ids === undefined ? 'is required' : 'must be an array of member ids' }]);
  if (!ids.every((x) => typeof x === 'string')) throw validationError([{ field: 'members_ids', code: 'invalid_type', message: 'must be an array of member ids' }]);
  return ids as string[];
}

/** What a legacy route does once it is let in. */
interface Call {
  principal: Principal;
  params: Record<string, string>;
  query: URLSearchParams;
}

interface LegacyRoute {
  method: 'GET' | 'POST' | 'PUT' | 'DELETE';
  /** Segments after /api/v1.0; `{id}` one id segment. */
  path: string;
  /** The role permission of the v3 operation it runs (spec "Authentication": role permissions apply as in v3). */
  role?: { resource: string; action: ScopeAction };
  /** Reads run outside a transaction; writes in one, with idempotency. */
  read?: (c: Call, ctx: ReadContext) => Promise<OpResult>;
  write?: (c: Call, ctx: WriteContext, body: unknown) => Promise<OpResult>;
}

/**
 * v3 field names → legacy ones, to name fields in validation messages as the
 * client sent them. A Map: a client's key (`__proto__`, `constructor`) is
 * never looked up on a prototype.
 */
const LEGACY_FIELD: ReadonlyMap<string, string> = new Map([['icon', 'logo'], ['ownerId', 'owner'], ['secondaryColor', 'secondary_color'], ['isGeneral', 'is_general'], ['ids', 'members_ids']]);

/** What one record of a legacy segment is called in messages (`No subteam '…'`, `No doc '…'`). */
function legacySubject(segment: string | undefined): string {
  if (segment === undefined) return 'record';
  return segment.endsWith('s') ? segment.slice(0, -1) : segment;
}

/**
 * The `message` of a legacy error: the v3 detail, told in the legacy
 * surface's words. Validation fields are named as the legacy body names them;
 * a missing path record is named by its segment (`No subteam 'X'`, whether
 * the id is malformed or unknown); on the members routes every complaint about
 * the ids names `members_ids` (never the v3 `ids` or `members.0`).
 */
function legacyMessage(err: ProblemError, segs: readonly string[]): string {
  const errors = err.extras.errors as FieldError[] | undefined;
  const onMembers = segs.length === 3 && segs[0] === 'subteams' && segs[2] === 'members';
  const rename = (f: string) => {
    const parts = f.split('.').map((p) => LEGACY_FIELD.get(p) ?? p);
    // `members.0` on a members route is an item of members_ids.
    return onMembers && (parts[0] === 'members' || parts[0] === 'members_ids') ? 'members_ids' : parts.join('.');
  };
  if (err.code === 'validation_failed' && Array.isArray(errors) && errors.length) {
    const parts = errors.slice(0, 5).map((e) => (e.field ? `${rename(e.field)}: ${e.message}` : e.message));
    return `${parts.join('; ')}${errors.length > 5 ? `; and ${errors.length - 5} more` : ''}`;
  }
  const missing = err.extras.missing as string[] | undefined;
  if (err.code === 'm2m_target_not_found' && Array.isArray(missing)) {
    const shown = missing.slice(0, 20).map((m) => `'${clip(String(m), 100)}'`).join(', ');
    return `${onMembers ? 'members_ids' : 'members'}: no member ${shown} in this workspace`;
  }
  if (err.code === 'resource_not_found' && typeof err.extras.id === 'string') {
    const field = err.extras.field;
    // A body field naming an id (`ownerId`): the problem already says which; rename the field.
    if (typeof field === 'string') return err.message.startsWith(`${field}:`) ? `${rename(field)}${err.message.slice(field.length)}` : err.message;
    return `No ${legacySubject(segs[0])} '${err.extras.id}'`;
  }
  if (onMembers && err.code === 'batch_empty') return 'members_ids: must be a non-empty array of member ids';
  if (onMembers && (err.code === 'batch_too_large' || err.code === 'bulk_too_large')) {
    const { max, received } = err.extras as { max?: unknown; received?: unknown };
    return typeof max === 'number' && typeof received === 'number' ? `members_ids: holds ${received} ids; at most ${max}` : 'members_ids: holds too many ids';
  }
  return err.message;
}

/**
 * The legacy v1.0 pipeline over plain records (mounted by createPmapi at
 * /api/v1.0). Same engine, same transaction, events and idempotency as v3.
 */
export function createLegacyHandler(engine: Engine, o: LegacyHandlerOptions): (req: HttpRequest) => Promise<HttpResponse> {
  const { registry } = engine.config;
  const store = engine.store;
  const portfolios = registry.byPath.get('portfolios')!;
  const labels = registry.byPath.get('labels')!;
  const holdsMacro = macroHolder(registry);

  // --- operations --------------------------------------------------------------

  /** One legacy page of a v3 list: `offset` rows skipped, at most `limit` shown, `hasMore` when more exist. */
  async function page(ctx: ReadContext, res: Resource, v3Query: URLSearchParams, limit: number, offset: number): Promise<{ rows: Record<string, unknown>[]; hasMore: boolean }> {
    const parsed = parseListQuery(v3Query, {
      res, registry, teamId: ctx.teamId, now: ctx.now, cursorSecret: engine.config.cursorSecret, memberId: ctx.principal.memberId, permissions: ctx.principal.permissions,
    });
    // Offset paging over the list in its default order: the statement skips `offset` rows itself (OFFSET), so only
    // the page's rows (plus one to learn hasMore) are read and built into JSON.
    parsed.plan.limit = limit;
    parsed.plan.offset = offset;
    const out = await engine.list(ctx, res, parsed);
    if (out.kind !== 'page') throw new Error('list answered no page');
    const data = (out.page.json !== undefined ? JSON.parse(partsText(out.page.json)) : out.page.data) as Record<string, unknown>[];
    return { rows: data, hasMore: out.page.hasMore };
  }

  async function one(ctx: ReadContext, res: Resource, id: string): Promise<Record<string, unknown>> {
    const out = await engine.get(ctx, res, id, NO_VIEW);
    return recordOf(out);
  }

  function recordOf(out: Outcome): Record<string, unknown> {
    if (out.kind !== 'record') throw new Error('operation answered no record');
    return out.json !== undefined ? (JSON.parse(out.json) as Record<string, unknown>) : out.record;
  }

  /** Legacy labels: `created_by` is the member behind the creating actor ("" for labels the service made). */
  async function labelsOf(ctx: ReadContext, rows: Record<string, unknown>[]): Promise<Record<string, unknown>[]> {
    const actors = rows.map((r) => r.createdByActorId).filter((a): a is string => typeof a === 'string');
    const members = await membersOfActors(store.db, ctx.teamId, actors);
    return rows.map((r) => labelOf(r, ctx.teamId, members.get(r.createdByActorId as string) ?? ''));
  }

  /** The legacy create/update body of a subteam, as the v3 portfolio body. */
  function subteamBody(body: unknown, update: boolean): Record<string, unknown> {
    const b = objectBody(body, ['name', 'initials', 'logo', 'color', 'members', ...(update ? ['owner'] : [])], ['id', 'secondary_color', 'is_general', ...(update ? [] : ['owner'])]);
    const out: Record<string, unknown> = {};
    if ('name' in b) out.name = b.name;
    if ('initials' in b) out.initials = b.initials;
    if ('logo' in b) out.icon = b.logo === '' ? null : b.logo;
    if ('color' in b) out.color = b.color;
    if ('members' in b) out.members = b.members;
    if ('owner' in b) out.ownerId = b.owner;
    return out;
  }

  function labelBody(body: unknown): Record<string, unknown> {
    const b = objectBody(body, ['name', 'color', 'type'], ['id', 'created_by', 'team', 'default']);
    const out: Record<string, unknown> = {};
    if ('name' in b) out.name = b.name;
    if ('color' in b) out.color = b.color === '' ? null : b.color;
    if ('type' in b) {
      if (b.type !== 0 && b.type !== 1) throw validationError([{ field: 'type', code: 'invalid_enum_value', message: 'must be 0 or 1' }]);
      out.type = b.type;
    }
    return out;
  }

  /** A generic read segment: list and get of a v3 resource in the legacy record form. */
  function readSegment(segment: LegacyReadSegment, resPath: string, listParams: Record<string, string> = {}): LegacyRoute[] {
    const res = registry.byPath.get(resPath)!;
    return [
      {
        method: 'GET', path: segment, role: { resource: resPath, action: 'read' },
        async read(c, ctx) {
          onlyParams(c.query, ['limit', 'offset', ...Object.keys(listParams)]);
          const { limit, offset } = paging(c.query);
          const v3q = new URLSearchParams();
          for (const [legacy, v3] of Object.entries(listParams)) {
            const v = oneParam(c.query, legacy);
            if (v !== undefined) v3q.set(v3, v);
          }
          const p = await page(ctx, res, v3q, limit, offset);
          return { status: 200, body: { [segment]: p.rows.map((r) => legacyRecord(segment, r)), hasMore: p.hasMore } };
        },
      },
      {
        method: 'GET', path: `${segment}/{id}`, role: { resource: resPath, action: 'read' },
        async read(c, ctx) {
          onlyParams(c.query, []);
          return { status: 200, body: legacyRecord(segment, await one(ctx, res, c.params.id!)) };
        },
      },
    ];
  }

  const routes: LegacyRoute[] = [
    // --- subteams (legacy portfolios) ---
    {
      method: 'GET', path: 'subteams', role: { resource: 'portfolios', action: 'read' },
      async read(c, ctx) {
        onlyParams(c.query, ['limit', 'offset']);
        const { limit, offset } = paging(c.query);
        const p = await page(ctx, portfolios, new URLSearchParams(), limit, offset);
        const subteams = p.rows.map(subteamOf);
        return { status: 200, body: { subteams, items: subteams.length > 0, hasMore: p.hasMore } };
      },
    },
    {
      method: 'POST', path: 'subteams', role: { resource: 'portfolios', action: 'write' },
      async write(_c, ctx, body) {
        const rec = recordOf(await engine.create(ctx, portfolios, subteamBody(body, false), NO_VIEW));
        return legacyWrite(201, 'Subteam created', rec.id as string);
      },
    },
    {
      method: 'GET', path: 'subteams/{id}', role: { resource: 'portfolios', action: 'read' },
      async read(c, ctx) {
        onlyParams(c.query, []);
        return { status: 200, body: subteamOf(await one(ctx, portfolios, c.params.id!)) };
      },
    },
    {
      method: 'PUT', path: 'subteams/{id}', role: { resource: 'portfolios', action: 'write' },
      async write(c, ctx, body) {
        await engine.update(ctx, portfolios, c.params.id!, subteamBody(body, true), NO_VIEW);
        return legacyWrite(200, 'Subteam updated', c.params.id!);
      },
    },
    {
      method: 'DELETE', path: 'subteams/{id}', role: { resource: 'portfolios', action: 'delete' },
      async write(c, ctx, body) {
        objectBody(body, []);
        await engine.remove(ctx, portfolios, c.params.id!);
        return legacyWrite(200, 'Subteam deleted', c.params.id!);
      },
    },
    {
      method: 'PUT', path: 'subteams/{id}/members', role: { resource: 'portfolios', action: 'write' },
      async write(c, ctx, body) {
        await engine.update(ctx, portfolios, c.params.id!, { members: membersIds(body) }, NO_VIEW);
        return legacyWrite(200, 'Subteam members replaced', c.params.id!);
      },
    },
    {
      method: 'DELETE', path: 'subteams/{id}/members', role: { resource: 'portfolios', action: 'write' },
      async write(c, ctx, body) {
        await engine.relation(ctx, portfolios, c.params.id!, 'members', 'remove', { ids: membersIds(body) }, NO_VIEW);
        return legacyWrite(200, 'Subteam members removed', c.params.id!);
      },
    },
    {
      method: 'POST', path: 'subteams/{id}/leave', role: { resource: 'portfolios', action: 'write' },
      async write(c, ctx, body) {
        objectBody(body, []);
        await engine.relation(ctx, portfolios, c.params.id!, 'members', 'remove', { ids: [c.principal.memberId] }, NO_VIEW);
        return legacyWrite(201, 'Left the subteam', c.params.id!);
      },
    },
    // --- apps (OAuth clients) ---
    {
      method: 'GET', path: 'apps',
      async read(c, ctx) {
        onlyParams(c.query, ['limit', 'offset']);
        const { limit, offset } = paging(c.query, true);
        return { status: 200, body: await appsOf(ctx, { limit, offset }) };
      },
    },
    {
      method: 'GET', path: 'apps/{id}',
      async read(c, ctx) {
        onlyParams(c.query, []);
        const [app] = await appsOf(ctx, { limit: 1, offset: 0, id: c.params.id! });
        if (!app) throw notFound('app', c.params.id!);
        return { status: 200, body: app };
      },
    },
    // --- labels ---
    {
      method: 'GET', path: 'labels', role: { resource: 'labels', action: 'read' },
      async read(c, ctx) {
        onlyParams(c.query, ['limit', 'offset', 'type']);
        const { limit, offset } = paging(c.query);
        const v3q = new URLSearchParams();
        const type = oneParam(c.query, 'type');
        if (type !== undefined && type !== '0' && type !== '1') throw badParam('type', 'must be 0 or 1');
        if (type !== undefined) v3q.set('type[eq]', type);
        const p = await page(ctx, labels, v3q, limit, offset);
        return { status: 200, body: { labels: await labelsOf(ctx, p.rows), hasMore: p.hasMore } };
      },
    },
    {
      method: 'POST', path: 'labels', role: { resource: 'labels', action: 'write' },
      async write(_c, ctx, body) {
        const b = labelBody(body);
        if (!('type' in b)) throw validationError([{ field: 'type', code: 'required', message: 'is required (0 or 1)' }]);
        const rec = recordOf(await engine.create(ctx, labels, b, NO_VIEW));
        return legacyWrite(201, 'Label created', rec.id as string);
      },
    },
    {
      method: 'GET', path: 'labels/{id}', role: { resource: 'labels', action: 'read' },
      async read(c, ctx) {
        onlyParams(c.query, []);
        const [l] = await labelsOf(ctx, [await one(ctx, labels, c.params.id!)]);
        return { status: 200, body: l };
      },
    },
    {
      method: 'PUT', path: 'labels/{id}', role: { resource: 'labels', action: 'write' },
      async write(c, ctx, body) {
        await engine.update(ctx, labels, c.params.id!, labelBody(body), NO_VIEW);
        return legacyWrite(200, 'Label updated', c.params.id!);
      },
    },
    {
      method: 'DELETE', path: 'labels/{id}', role: { resource: 'labels', action: 'delete' },
      async write(c, ctx, body) {
        objectBody(body, []);
        await engine.remove(ctx, labels, c.params.id!);
        return legacyWrite(200, 'Label deleted', c.params.id!);
      },
    },
    // --- read-only segments ---
    ...readSegment('tasks', 'tasks', { project_id: 'projectId' }),
    ...readSegment('projects', 'projects'),
    ...readSegment('docs', 'documents', { project_id: 'projectId' }),
    ...readSegment('members', 'members'),
  ];
  const compiled = routes.map((r) => ({ r, parts: r.path.split('/') }));
  const served = routes.map((r) => `${r.method} /${r.path}`);
  if (served.join('\n') !== LEGACY_ROUTES.join('\n')) throw new Error(`legacy.ts: the route table differs from LEGACY_ROUTES (served: ${served.join(', ')})`);

  /** The legacy apps of the caller's workspace (docs/not-shown.md: registered for it, or connected by one of its members). */
  async function appsOf(ctx: ReadContext, q: { limit: number; offset: number; id?: string }): Promise<Record<string, unknown>[]> {
    if (q.id !== undefined && !isId(q.id)) return [];
    const rows = await workspaceApps(store.db, ctx.teamId, q);
    const scopes = await appFamilyScopes(store.db, store.dialect, ctx.teamId, rows.map((r) => r.id as string));
    return rows.map((r) => appOf({
      id: r.id as string,
      name: r.name as string,
      redirectUris: store.dialect.decode('json', r.redirect_uris) as string[],
      createdAt: new Date(store.dialect.decode('timestamp', r.created_at) as number).toISOString(),
    }, appScopes(scopes.get(r.id as string) ?? [])));
  }

  function match(method: string, segs: string[]): { route: LegacyRoute; params: Record<string, string> } | { allowed: string[] } | undefined {
    let allowed: string[] | undefined;
    for (const { r, parts } of compiled) {
      if (parts.length !== segs.length) continue;
      const params: Record<string, string> = {};
      let ok = true;
      for (let i = 0; i < parts.length && ok; i++) {
        const p = parts[i]!;
        if (p.startsWith('{')) params[p.slice(1, -1)] = segs[i]!;
        else ok = p === segs[i];
      }
      if (!ok) continue;
      if (r.method === method) return { route: r, params };
      (allowed ??= []).push(r.method);
    }
    return allowed ? { allowed } : undefined;
  }

  // --- the pipeline ------------------------------------------------------------

  function parseBody(req: HttpRequest): unknown {
    const raw = req.body;
    if (raw === undefined || raw.length === 0) return undefined;
    const size = typeof raw === 'string' ? Buffer.byteLength(raw) : raw.byteLength;
    if (size > LEGACY_BODY_LIMIT) throw new ProblemError('payload_too_large', `The body exceeds ${LEGACY_BODY_LIMIT} bytes`, { limit: LEGACY_BODY_LIMIT });
    const ct = (header(req, 'content-type') ?? '').toLowerCase();
    const mime = ct.split(';')[0]!.trim();
    if (mime !== 'application/json' && !/^application\/[a-z0-9.+-]+\+json$/.test(mime)) {
      throw new ProblemError('unsupported_media_type', 'Send the body as application/json');
    }
    return parseJsonBody(raw);
  }

  async function runWrite(req: HttpRequest, principal: Principal, op: (ctx: WriteContext, body: unknown) => Promise<OpResult>): Promise<OpResult> {
    return runMutation(engine, principal, { method: req.method, url: req.url, body: parseBody(req), idempotencyKey: header(req, 'idempotency-key') }, op);
  }

  return async function handleLegacy(req: HttpRequest): Promise<HttpResponse> {
    const given = header(req, 'x-request-id');
    const requestId = given && /^[\x21-\x7e]{1,128}$/.test(given) ? given : engine.config.ids.uuid();
    const extra: Record<string, string> = {};
    const common = legacyHeaders(o.docsBase(req));
    const answer = (status: number, body: unknown, headers: Record<string, string> = {}): HttpResponse => ({
      status, headers: { ...JSON_HEADERS, 'x-request-id': requestId, ...extra, ...headers, ...common }, body: JSON.stringify(body),
    });
    // The path's segments once parsed (errors name records by their segment).
    let segs: string[] = [];
    const fail = (err: ProblemError): HttpResponse => {
      const headers = Object.fromEntries(Object.entries(err.headers).map(([k, v]) => [k.toLowerCase(), v]));
      if (err.code === 'rate_limited') for (const k of Object.keys(extra)) delete extra[k];
      return answer(err.status, legacyErrorBody(err.status, legacyMessage(err, segs)), headers);
    };
    try {
      if (req.url.length > MAX_URL_LENGTH) throw new ProblemError('invalid_query_param', `The URL is longer than ${MAX_URL_LENGTH} characters`);
      const qIndex = req.url.indexOf('?');
      const path = qIndex === -1 ? req.url : req.url.slice(0, qIndex);
      let query: URLSearchParams;
      try {
        query = new URLSearchParams(qIndex === -1 ? '' : req.url.slice(qIndex + 1));
      } catch {
        throw new ProblemError('invalid_query_param', 'The query string is malformed');
      }
      const method = req.method.toUpperCase();
      segs = path.slice(LEGACY_PREFIX.length).split('/').filter((s) => s !== '').map((s) => {
        try {
          return decodeURIComponent(s);
        } catch {
          return s;
        }
      });
      // Methods no legacy route serves are refused before the token is looked up (and so count in no rate-limit
      // bucket): 405 with the route's methods when the path is served, else every method of the surface.
      if (!SERVED_METHODS.has(method)) {
        const m = segs.length ? match(method, segs) : undefined;
        throw new ProblemError('method_not_allowed', `${clip(method, 20)} is not allowed on the legacy API`, {}, { allow: m && 'allowed' in m ? m.allowed.join(', ') : 'GET, POST, PUT, DELETE' });
      }
      const now = engine.config.clock.now();
      const principal = await authenticate(store.reads ?? store.db, store.dialect, bearerOf(req.headers.authorization), now, o.permissionsOf, o.tokenLookup);
      principal.clientIp = o.clientIp ? o.clientIp(req) : req.remoteAddress;
      const mount = mountOf(req);
      if (mount) principal.mount = mount;
      noteRequest(req, { workspace: principal.teamId });
      // The legacy rate limiter's call site (spec "Limits", legacy table): per token and per IP, both must pass.
      if (o.legacyLimiter) {
        const h = await o.legacyLimiter.check({ tokenId: principal.tokenId, method, path: `/${segs.join('/')}`, clientIp: principal.clientIp, now });
        if (h) Object.assign(extra, h);
      }
      // Spec "Authentication" rules 2-3: the segment and the method decide; fine-grained scopes cover five segments.
      if (!legacyScopeCovers(principal.scopes, method, segs, (a) => holdsMacro(principal, a))) {
        const action = legacyAction(method, segs);
        const resource = scopeResourceOf(segs[0]);
        throw new ProblemError('permission_denied', resource && segs.length <= 2
          ? `This token's scopes do not cover ${action} on /${segs[0]} (${resource}:${action}, or the ${action} scope)`
          : `This route needs the ${action} scope; fine-grained scopes do not reach it on the legacy surface (use the v3 API)`);
      }
      if (segs.length === 0) throw new ProblemError('route_not_found', `No route ${method} ${LEGACY_PREFIX}`);
      const m = match(method, segs);
      if (!m) throw new ProblemError('route_not_found', `No route ${method} ${LEGACY_PREFIX}/${clip(segs.join('/'), 200)}`);
      if ('allowed' in m) throw new ProblemError('method_not_allowed', `${method} is not allowed here`, {}, { allow: m.allowed.join(', ') });
      const { route: r, params } = m;
      noteRequest(req, { route: `${LEGACY_PREFIX}/${r.path}` });
      // Role permissions, as the v3 operation behind the route asks them.
      if (r.role) {
        const { resource, action } = r.role;
        const missing = [...(grants(principal.permissions, resource, action) ? [] : [`${resource}:${action}`]), ...o.extraPermissions(resource, action).filter((p) => !principal.permissions.has(p))];
        if (missing.length) throw new ProblemError('permission_denied', `Missing permission: ${missing.join(', ')}`);
      }
      // A path id that no id can be is answered like an unknown one, without reaching storage.
      for (const id of Object.values(params)) if (!isId(id)) throw notFound(legacySubject(segs[0]), id);
      const call: Call = { principal, params, query };
      let out: OpResult;
      if (r.read) {
        const body = parseBody(req);
        if (body !== undefined && !(typeof body === 'object' && body !== null && !Array.isArray(body) && Object.keys(body).length === 0)) {
          throw validationError([{ field: '', code: 'invalid_type', message: 'this operation takes no body' }]);
        }
        out = await r.read(call, engine.readContext(principal));
      } else {
        onlyParams(query, []);
        out = await runWrite(req, principal, (ctx, body) => r.write!(call, ctx, body));
      }
      return answer(out.status, out.body, out.headers ?? {});
    } catch (err) {
      if (err instanceof ProblemError) return fail(err);
      if (store.dialect.isUniqueViolation(err)) return fail(new ProblemError('conflict', 'The change collides with an existing record'));
      if (store.dialect.isUnavailable(err)) return fail(new ProblemError('service_unavailable', 'The database is unavailable; retry shortly', {}, { 'retry-after': '1' }));
      o.onError(err, req);
      return fail(new ProblemError('internal_error', errorCodes.internal_error.title));
    }
  };
}
