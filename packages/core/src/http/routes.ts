import type { z } from 'zod';
import type { ScopeAction } from '../auth/scopes';
import type { Registry } from '../resources/registry';
import type { Engine, OpResult } from '../services/engine';
import type { ReadContext, WriteContext } from '../services/context';

/** The scope (and role permission of the same name) a route needs. */
export interface RouteScope {
  resource: string;
  action: ScopeAction;
}

/**
 * A route outside the standard operations (personal access tokens, search,
 * …). Declared once: method, path, scope and extra role permissions; the
 * pipeline authenticates, authorises and (for writes) runs it in one
 * transaction with idempotency and the outbox.
 */
export interface CustomRoute {
  method: 'GET' | 'POST' | 'PATCH' | 'DELETE';
  /** Segments after the base path; `{id}` matches one id segment: `personal-access-tokens/{id}`. */
  path: string;
  scope: RouteScope;
  /** Role permissions needed besides the scope's own (`manageRoles`). */
  permissions?: string[];
  /**
   * The route acts only on the caller's own records (their personal access
   * tokens): the token's scope is checked, but no role permission, since
   * every member manages their own.
   */
  ownRecords?: boolean;
  /** Runs in a write transaction (and may carry an Idempotency-Key). */
  write: boolean;
  /**
   * What `{id}` names, for the 404 of an id that is not found (`personal access
   * token` → "No personal access token 'x'"). A path id that no id can be
   * (spec "Conventions": `^[0-9A-Za-z_!]+$`) gets that same answer before the
   * route runs, so it never reaches storage.
   */
  subject?: string;
  /** The operation takes no body (spec rule 13: validated exactly): only an absent body or `{}` is accepted. */
  noBody?: boolean;
  /**
   * The request body, for the OpenAPI document: the zod schema the handler
   * parses the body with (the same object, never a copy), or, for a body
   * made of a resource's create body, `{ create: resource, nested: key }`:
   * that body plus `nested`, an array of nodes of the same shape (the task
   * tree). Every write route that takes a body declares it.
   */
  body?: z.ZodType | { create: string; nested: string };
  /**
   * Work done before the write transaction opens, so that no transaction
   * waits on it (fetching a URL, storing bytes): it sees a read context and
   * the request, and its result reaches `run` as `args.prepared`. When the
   * write then fails, or replays an earlier answer, `discard` undoes it.
   */
  prepare?(ctx: ReadContext, args: RouteArgs): Promise<unknown>;
  discard?(ctx: ReadContext, prepared: unknown): Promise<void>;
  run(ctx: WriteContext, args: RouteArgs): Promise<OpResult>;
}

export interface RouteArgs {
  params: Record<string, string>;
  query: URLSearchParams;
  body: unknown;
  /** What `prepare` produced (write routes that declare it). */
  prepared?: unknown;
  /** The standard operations, for routes that create records the standard way (the task tree). Given to `run`. */
  engine?: Engine;
}

/** One row of the route table: what a request needs to be let in. */
export interface RouteInfo {
  method: string;
  path: string;
  scope: string;
  permissions: string[];
  /** Acts only on the caller's own records: the scope is checked, no role permission. */
  ownRecords?: true;
}

/** Match a custom route's pattern against path segments. */
export function matchRoute(route: CustomRoute, method: string, segs: string[]): Record<string, string> | undefined {
  return method === route.method ? matchPath(route.path.split('/'), segs) : undefined;
}

function matchPath(parts: readonly string[], segs: readonly string[]): Record<string, string> | undefined {
  if (parts.length !== segs.length) return undefined;
  const params: Record<string, string> = {};
  for (let i = 0; i < parts.length; i++) {
    const p = parts[i]!;
    if (p.startsWith('{') && p.endsWith('}')) params[p.slice(1, -1)] = segs[i]!;
    else if (p !== segs[i]) return undefined;
  }
  return params;
}

/** What the custom routes say of a request's method and path segments. */
export type RouteMatch =
  | { route: CustomRoute; params: Record<string, string> }
  /** The path is a custom route's, but not with this method. */
  | { allowed: string[] }
  | undefined;

/**
 * The custom routes compiled once: patterns split ahead of time and grouped by
 * segment count and first segment, so a request compares itself with the few
 * routes that could match instead of every route. Declaration order still
 * decides between routes that both match.
 */
export function compileRoutes(routes: readonly CustomRoute[]): (method: string, segs: readonly string[]) => RouteMatch {
  type Compiled = { route: CustomRoute; parts: string[] };
  const byHead = new Map<string, Compiled[]>();
  const wildHead: Compiled[] = [];
  routes.forEach((route) => {
    const parts = route.path.split('/');
    const head = parts[0]!;
    const c = { route, parts };
    if (head.startsWith('{')) wildHead.push(c);
    else {
      const key = `${parts.length}/${head}`;
      const list = byHead.get(key);
      if (list) list.push(c);
      else byHead.set(key, [c]);
    }
  });
  const order = new Map(routes.map((r, i) => [r, i]));
  return (method, segs) => {
    const named = byHead.get(`${segs.length}/${segs[0]}`);
    const candidates = wildHead.length === 0 ? named ?? [] : [...(named ?? []), ...wildHead].sort((a, b) => order.get(a.route)! - order.get(b.route)!);
    let allowed: string[] | undefined;
    for (const c of candidates) {
      const params = matchPath(c.parts, segs);
      if (!params) continue;
      if (c.route.method === method) return { route: c.route, params };
      (allowed ??= []).push(c.route.method);
    }
    return allowed ? { allowed } : undefined;
  };
}

/** Permissions a standard operation needs beyond its scope, by resource and action. */
export type ExtraPermissions = (resource: string, action: ScopeAction) => string[];

/**
 * The whole route table: every standard operation of every resource, and the
 * custom routes, each with its scope and role permissions.
 */
export function routeTable(registry: Registry, custom: readonly CustomRoute[], extra: ExtraPermissions): RouteInfo[] {
  const rows: RouteInfo[] = [];
  for (const r of registry.all()) {
    const add = (method: string, path: string, resource: string, action: ScopeAction) =>
      rows.push({ method, path, scope: `${resource}:${action}`, permissions: extra(resource, action), ...(r.ownedBy ? { ownRecords: true as const } : {}) });
    const ops = r.operations;
    if (ops.list) add('GET', `/${r.path}`, r.path, 'read');
    if (ops.create) add('POST', `/${r.path}`, r.path, 'write');
    if (ops.get) add('GET', `/${r.path}/{id}`, r.path, 'read');
    if (ops.update) add('PATCH', `/${r.path}/{id}`, r.path, 'write');
    if (ops.delete) add('DELETE', `/${r.path}/{id}`, r.path, 'delete');
    if (r.softDelete) add('POST', `/${r.path}/{id}/restore`, r.path, 'delete');
    for (const [seg, rel] of Object.entries(r.relationByPath)) {
      if (!r.relations![rel]!.supported) continue;
      add('POST', `/${r.path}/{id}/${seg}`, r.path, 'write');
      add('DELETE', `/${r.path}/{id}/${seg}`, r.path, 'write');
      add('POST', `/${r.path}/{id}/${seg}/remove`, r.path, 'write');
    }
  }
  for (const c of custom) {
    rows.push({
      method: c.method, path: `/${c.path}`, scope: `${c.scope.resource}:${c.scope.action}`, permissions: c.permissions ?? [],
      ...(c.ownRecords ? { ownRecords: true as const } : {}),
    });
  }
  return rows;
}
