import { createHash } from 'node:crypto';
import type { CustomRoute } from '../http/routes';
import { ProblemError } from '../errors/problem';
import type { Resource } from '../resources/define-resource';
import type { ReadContext } from '../services/context';
import type { OpResult } from '../services/engine';
import { materialize, assertExpandReadable, EXPAND_ROW_BUDGET } from '../services/serialize';
import { parseListQuery } from '../query/parse';
import { nextCursor as nextPageCursor, parsePageQuery, type PageSpec } from '../query/page';
import { takePage, v3Page } from '../presenters/v3';
import { countSearchMatches, searchPage, type TextSearch } from '../sql/queries/search';
import { SEARCH_TIMEOUT_MS, withSearchDeadline } from './search-deadline';

/** Search `q` bounds (spec "Standard operations" rule 9, "Limits"), in characters (code points) after trimming. */
export const SEARCH_Q_MIN = 3;
export const SEARCH_Q_MAX = 200;

/** Why a `q` is refused (`search_query_invalid` with `reason`); undefined when it is acceptable. Checked in this order. */
export function searchQueryProblem(q: string): 'script' | 'html' | 'url' | 'email' | undefined {
  if (/<\s*\/?\s*script\b/i.test(q) || /\b(?:javascript|vbscript|livescript)\s*:/i.test(q) || /\bdata\s*:\s*text\/html/i.test(q)
    || /<[a-z][^>]*\son[a-z]+\s*=/i.test(q)) return 'script';
  if (/<\/?[a-z][a-z0-9-]*(?=[\s/>])/i.test(q) || /<!--|<!doctype/i.test(q) || /&(?:lt|gt|#0*60|#x0*3c);/i.test(q)) return 'html';
  if (/\b[a-z][a-z0-9+.-]*:\/\/\S/i.test(q) || /\bwww\.[a-z0-9-]+\.[a-z0-9.-]+/i.test(q)) return 'url';
  if (/\bmailto:/i.test(q) || /[a-z0-9.!#$%&'*+/=?^_`{|}~-]+@[a-z0-9-]+(?:\.[a-z0-9-]+)*\.[a-z]{2,}/i.test(q)) return 'email';
  return undefined;
}

/** Read `q` from a search query or fail with the spec's search_query_* codes. */
export function parseSearchQ(query: URLSearchParams): string {
  const all = query.getAll('q');
  if (all.length === 0) throw new ProblemError('search_query_missing', 'Give the search text in q');
  if (all.length > 1) throw new ProblemError('invalid_query_param', "Query parameter 'q' is given more than once", { name: 'q', allowed: 'a single value' });
  const q = all[0]!.trim();
  if (q.includes('\u0000')) throw new ProblemError('invalid_query_param', 'q may not contain NUL characters', { name: 'q', allowed: 'text without NUL characters' });
  const length = [...q].length;
  if (length < SEARCH_Q_MIN) {
    throw new ProblemError('search_query_too_short', `q must be at least ${SEARCH_Q_MIN} characters after trimming`, { min: SEARCH_Q_MIN, length });
  }
  if (length > SEARCH_Q_MAX) {
    throw new ProblemError('search_query_too_long', `q must be at most ${SEARCH_Q_MAX} characters after trimming`, { max: SEARCH_Q_MAX, length });
  }
  const reason = searchQueryProblem(q);
  if (reason) throw new ProblemError('search_query_invalid', `q may not contain ${reason === 'email' ? 'an e-mail address' : reason === 'url' ? 'a URL' : reason === 'html' ? 'HTML' : 'a script'}`, { reason });
  return q;
}

/**
 * The spec's Search operation over one text field of a resource:
 * `GET /{resource}/search?q=…` with cursor, limit, includeTotal, expand,
 * fields[…] and the list's filters. Matches are rows whose field contains q
 * (case-insensitive, like the `contains` filter), ranked exact match, then
 * prefix, then substring; ties by the field, then id. Pages are keyset pages
 * over (rank, field, id) behind a signed cursor bound to q and the filters.
 */
export function searchRoute(resourcePath: string, field: string, o: { ownRowsOnly?: boolean } = {}): CustomRoute {
  const endpoint = `${resourcePath}/search`;
  return {
    method: 'GET',
    path: endpoint,
    scope: { resource: resourcePath, action: 'read' },
    write: false,
    async run(ctx, { query, engine }): Promise<OpResult> {
      const res = ctx.registry.byPath.get(resourcePath)!;
      const q = parseSearchQ(query);
      if (query.has('sort')) {
        throw new ProblemError('invalid_query_param', 'Search results are ranked by relevance; sort is not accepted here', {
          name: 'sort', allowed: ['q', 'cursor', 'limit', 'includeTotal', 'expand', 'fields[resource]', ...Object.keys(res.filters).map((n) => `${n}[…]`)],
        });
      }
      // Everything but q and cursor is a list query: filters, limit (clamped to 200), includeTotal, expand, fields.
      const rest = new URLSearchParams();
      for (const [k, v] of query) if (k !== 'q' && k !== 'cursor') rest.append(k, v);
      const { plan, filterKey, projectId } = parseListQuery(rest, {
        res, registry: ctx.registry, teamId: ctx.teamId, now: ctx.now, cursorSecret: ctx.cursorSecret, memberId: ctx.principal.memberId,
        permissions: ctx.principal.permissions, ...(o.ownRowsOnly ? { ownRowsOnly: true } : {}),
      });
      assertExpandReadable(ctx, res, plan.expand);
      // Rows of projects the caller cannot open are not there (as in the list).
      let none = false;
      if (res.projectField && projectId !== undefined) await ctx.access.assertProject(projectId);
      else if (res.projectField) {
        const ids = await ctx.access.accessibleIds();
        if (ids !== 'all') {
          if (ids.length === 0) none = true;
          else plan.conditions.push({ column: res.columnOf[res.projectField]!, kind: 'text', op: 'in', value: ids });
        }
      }
      const binding = createHash('sha256').update(`${filterKey}\n${q}`).digest('base64url').slice(0, 22);

      // The cursor goes through the one pagination parser, bound to this endpoint, q and the filters; ranked order has no sort key.
      const bind = { teamId: ctx.teamId, now: ctx.now, cursorSecret: ctx.cursorSecret, binding };
      const spec: PageSpec = { endpoint };
      const cursorOnly = new Map<string, string>();
      const cursors = query.getAll('cursor');
      if (cursors.length > 1) throw new ProblemError('invalid_query_param', "Query parameter 'cursor' is given more than once", { name: 'cursor', allowed: 'a single value' });
      if (cursors.length === 1) cursorOnly.set('cursor', cursors[0]!);
      const paging = parsePageQuery(cursorOnly, spec, bind);
      let after: [number, string] | undefined;
      if (paging.after) {
        // The boundary is [rank] and the id: its column value is read in SQL (sql/queries/search.ts), so the cursor stays short.
        const b = paging.after.value;
        if (!Array.isArray(b) || b.length !== 1 || typeof b[0] !== 'number') throw new ProblemError('cursor_invalid', 'The cursor is not valid here: malformed');
        after = [b[0], paging.after.id];
      }

      const search: TextSearch = { resource: res, teamId: ctx.teamId, column: res.columnOf[field]!, needle: q.toLowerCase(), conditions: plan.conditions };
      // The statements run under the search deadline (search_timed_out): routes/search-deadline.ts.
      const { page, hasMore, recs, data, total } = await withSearchDeadline(ctx, engine?.config.searchTimeoutMs ?? SEARCH_TIMEOUT_MS, async (sctx, check) => {
        const rows = none ? [] : await searchPage(sctx.repo, search, after, plan.limit + 1);
        check();
        const { rows: page, hasMore } = takePage(rows, plan.limit);
        const recs = page.map((row) => sctx.repo.decode(res, row));
        const data = await materialize(sctx, res, recs, { expand: plan.expand, fields: plan.fields, budget: { used: 0, max: EXPAND_ROW_BUDGET } });
        check();
        const total = plan.includeTotal ? (none ? 0 : await countSearchMatches(sctx.repo, search)) : undefined;
        check();
        return { page, hasMore, recs, data, total };
      });
      let nextCursor: string | null = null;
      if (hasMore) {
        const last = page[page.length - 1]!;
        nextCursor = nextPageCursor(spec, bind, undefined, [Number(last.pm_search_rank)], recs[recs.length - 1]!.id);
      }
      return v3Page({ data, ...(total !== undefined ? { total } : {}), limit: plan.limit, hasMore, nextCursor });
    },
  };
}

/** Search routes: the spec's Search operation (paths not shown: docs/not-shown.md). */
export const searchRoutes: CustomRoute[] = [
  searchRoute('roles', 'name'),
  // Time-entry search stays on the caller's own entries whatever the role (spec "Authentication" rule 5).
  searchRoute('time-entries', 'description', { ownRowsOnly: true }),
  // A member's own favorite folders only (they are private to their member: `privateTo`).
  searchRoute('favorite-folders', 'name'),
];
