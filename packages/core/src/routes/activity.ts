import { createHash } from 'node:crypto';
import type { CustomRoute } from '../http/routes';
import { ProblemError } from '../errors/problem';
import { grants } from '../auth/scopes';
import type { OpResult } from '../services/engine';
import { invalidParam, nextCursor, parsePageQuery, singleParams, unknownParam, type PageSpec } from '../query/page';
import { parseInstant } from '../query/parse';
import { takePage, v3Page } from '../presenters/v3';
import { activityPage, countActivity, type ActivityFilters, type ActivityScope } from '../sql/queries/activity';

/**
 * The activity feed ("Other resources": fields not shown; docs/not-shown.md
 * "Activity feed"): `GET /activity`, a read-only view of the workspace's
 * events, fed from the outbox webhooks are delivered from. Each item is the
 * event as a webhook delivery carries it (eventId, type, aggregateType,
 * aggregateId, teamId, projectId, triggeredBy, timestamp, payload). Newest
 * first (timestamp, then eventId, descending; no other sort), paged by the
 * engine's signed cursor (bound to the filters and the caller), limit 1-200
 * (default 50), includeTotal. Filters: type, aggregateType, aggregateId,
 * triggeredById `[eq|in]`, projectId `[eq|in|null|notNull]`, createdAt
 * `[gt|gte|lt|lte]` (on the event's timestamp). A projectId filter naming a
 * project the caller cannot open is 403 project_access_denied.
 *
 * What the caller sees: events of their own workspace only; of resources
 * whose read scope the token holds and whose read permission the role holds
 * (personal resources: only events the caller wrote); of no project, or of a
 * project the caller may open; and of private records (a private document, a
 * chat, a reminder, another member's time entries) only when the event's
 * audience names the caller (another member's time entries: when the
 * caller's role holds viewTimeReports now). Each page examines at most
 * ACTIVITY_SCAN_BUDGET events: when they hold too few the caller may see, the
 * page is short (even empty) with hasMore and a cursor past the last event
 * examined. `total` counts among at most ACTIVITY_COUNT_BUDGET events
 * (`totalCapped: true` when there were more: a lower bound).
 */

const ENDPOINT = 'activity';
const LIST_FILTERS = ['type', 'aggregateType', 'aggregateId', 'triggeredById', 'projectId'] as const;
const RANGE_OPS = ['gt', 'gte', 'lt', 'lte'] as const;
const MAX_IN = 100;
const MAX_VALUE = 200;
const ALLOWED = [
  'cursor', 'limit', 'includeTotal',
  ...LIST_FILTERS.flatMap((n) => [`${n}[eq]`, `${n}[in]`]), 'projectId[null]', 'projectId[notNull]',
  ...RANGE_OPS.map((o) => `createdAt[${o}]`),
];

function values(key: string, raw: string, op: 'eq' | 'in'): string[] {
  const items = op === 'in' ? raw.split(',').map((s) => s.trim()).filter(Boolean) : [raw];
  if (items.length === 0 || items.some((s) => s === '')) throw invalidParam(key, 'a non-empty value', `${key} needs a value`);
  if (items.length > MAX_IN) throw invalidParam(key, `at most ${MAX_IN} values`, `${key} takes at most ${MAX_IN} values`);
  if (items.some((s) => s.length > MAX_VALUE)) throw invalidParam(key, `values of at most ${MAX_VALUE} characters`);
  return items;
}

/** The feed's filters from its query; anything else (but the paging parameters) is refused. */
export function parseActivityFilters(params: ReadonlyMap<string, string>, known: ReadonlySet<string>): { filters: ActivityFilters; fingerprint: string } {
  const filters: ActivityFilters = {};
  const parts: string[] = [];
  for (const [key, raw] of params) {
    if (key === 'cursor' || key === 'limit' || key === 'includeTotal') continue;
    const m = /^([A-Za-z]+)\[([A-Za-z]+)\]$/.exec(key);
    const name = m?.[1];
    const op = m?.[2];
    if (!m || !ALLOWED.includes(key)) throw unknownParam(key, ALLOWED, 'the activity feed');
    parts.push(`${key}=${raw}`);
    if (name === 'createdAt') {
      // The instants every list's timestamp filters take (a date alone is UTC midnight).
      const t = parseInstant(raw);
      if (t === undefined) throw invalidParam(key, 'ISO 8601 timestamp', `Query parameter '${key}' must be an ISO 8601 timestamp`);
      (filters.createdAt ??= {})[op as (typeof RANGE_OPS)[number]] = t;
      continue;
    }
    if (op === 'null' || op === 'notNull') {
      if (raw !== 'true' && raw !== 'false') throw invalidParam(key, ['true', 'false'], `${key} takes true (or false)`);
      const isNull = (op === 'null') === (raw === 'true');
      if (filters.projectNull !== undefined && filters.projectNull !== isNull) throw invalidParam(key, null, 'projectId[null] and projectId[notNull] contradict each other');
      filters.projectNull = isNull;
      continue;
    }
    const given = values(key, raw, op as 'eq' | 'in');
    if (name === 'aggregateType') {
      const unknown = given.filter((t) => !known.has(t));
      if (unknown.length) throw invalidParam(key, [...known].sort(), `${key}: unknown resource ${unknown.map((u) => `'${u}'`).join(', ')}`);
    }
    const k = name as (typeof LIST_FILTERS)[number];
    if (filters[k]) throw invalidParam(key, null, `${name} is filtered twice`);
    filters[k] = given;
  }
  parts.sort();
  return { filters, fingerprint: parts.join('&') };
}

export const activityRoute: CustomRoute = {
  method: 'GET',
  path: ENDPOINT,
  scope: { resource: 'activity', action: 'read' },
  // Breadth follows the role per event (the read permission of each resource), not a permission of its own.
  ownRecords: true,
  write: false,
  async run(ctx, { query }): Promise<OpResult> {
    const params = singleParams(query);
    const p = ctx.principal;
    const readable: string[] = [];
    const own: string[] = [];
    const widened: string[] = [];
    const known = new Set<string>();
    for (const res of ctx.registry.all()) {
      if (!res.events) continue;
      known.add(res.name);
      const scoped = grants(p.scopes, res.path, 'read');
      if (res.ownedBy ? scoped : scoped && grants(p.permissions, res.path, 'read')) {
        readable.push(res.name);
        if (res.ownedBy) own.push(res.name);
        // Judged now, not when the event was written: the stored audience of such an event names its owner alone.
        const o = res.ownerRead;
        if (o && !res.privateTo && !res.membersOnly && p.permissions.has(o.widenedBy)) widened.push(res.name);
      }
    }
    const { filters, fingerprint } = parseActivityFilters(params, known);
    const binding = createHash('sha256').update(`${p.memberId}\n${fingerprint}`).digest('base64url').slice(0, 22);
    const spec: PageSpec = { endpoint: ENDPOINT };
    const bind = { teamId: ctx.teamId, now: ctx.now, cursorSecret: ctx.cursorSecret, binding };
    const page = parsePageQuery(params, spec, bind);
    let after: [number, string] | undefined;
    if (page.after) {
      if (typeof page.after.value !== 'number') throw new ProblemError('cursor_invalid', 'The cursor is not valid here: malformed');
      after = [page.after.value, page.after.id];
    }
    // Naming a project the caller cannot open is refused, as for lists restricted by projectId.
    for (const id of filters.projectId ?? []) await ctx.access.assertProject(id);
    const scope: ActivityScope = {
      teamId: ctx.teamId, memberId: p.memberId, readableTypes: readable, ownTypes: own, widenedTypes: widened,
      // A projectId filter (each id already checked) is the bound, as for lists restricted by projectId; without one
      // the feed is a workspace-wide list (400 accessible_project_ids_exceeded past 1,000 projects, spec "Errors").
      projects: filters.projectId?.length ? [...filters.projectId] : await ctx.access.accessibleIds(),
    };
    const none = readable.length === 0;
    const found = none ? { rows: [] } : await activityPage(ctx.repo, scope, filters, after, page.limit + 1);
    const { rows: taken, hasMore: full } = takePage(found.rows, page.limit);
    // A full page resumes after its last event; one cut short by the scan budget, after the last event examined.
    const resume = full ? taken[taken.length - 1] : found.budgetEnd;
    const total = page.includeTotal ? (none ? { n: 0, capped: false } : await countActivity(ctx.repo, scope, filters)) : undefined;
    const out = v3Page({
      data: taken.map((r) => r.envelope),
      ...(total !== undefined ? { total: total.n } : {}),
      limit: page.limit,
      hasMore: resume !== undefined,
      nextCursor: resume ? nextCursor(spec, bind, undefined, resume.createdAt, resume.id) : null,
    });
    // The envelope's one addition: a total counted within the budget and short of the feed says so.
    if (total?.capped) out.body = { ...(out.body as Record<string, unknown>), totalCapped: true };
    return out;
  },
};

export const activityRoutes: CustomRoute[] = [activityRoute];
