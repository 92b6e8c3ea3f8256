import { ProblemError } from '../errors/problem';
import { decodeCursor, encodeCursor } from './cursor';

/**
 * The one pagination parser (spec "Standard operations" rules 3-6): `limit`,
 * `includeTotal`, `sort` and the signed `cursor`, with the same answers on
 * every list — resources, search, personal access tokens, the delivery log.
 * A list describes what it accepts; everything it does not consume itself
 * and this parser does not know is refused by the caller.
 */

export const MAX_LIMIT = 200;
export const DEFAULT_LIMIT = 50;

/** Names other APIs use for paging; answered with `pagination_param_unknown` everywhere. */
export const FOREIGN_PAGINATION: ReadonlySet<string> = new Set([
  'offset', 'page', 'pageSize', 'page_size', 'perPage', 'per_page', 'pageToken', 'page_token', 'after', 'before',
  'skip', 'take', 'startingAfter', 'starting_after', 'endingBefore', 'ending_before', 'nextCursor', 'next_cursor',
  'pageNumber', 'start', 'count', 'size',
]);

/** The parameters this parser reads (when the list accepts them). */
export const PAGE_PARAMS: ReadonlySet<string> = new Set(['limit', 'includeTotal', 'sort', 'cursor']);

export interface PageSpec {
  /** What cursors are bound to (`tasks`, `roles/search`, `personal-access-tokens`). */
  endpoint: string;
  /** Accepted sort fields and the default (`-createdAt`); absent: `sort` is not accepted. */
  sorts?: { fields: ReadonlySet<string>; default: string; resource: string };
  /** Page size bounds (default 1-200, 50); larger values are clamped. */
  maxLimit?: number;
  defaultLimit?: number;
  /** The list pages with a cursor (default true). */
  cursor?: boolean;
  /** `includeTotal` is accepted (default true). */
  total?: boolean;
}

export interface PageBinding {
  teamId: string;
  now: number;
  cursorSecret: Uint8Array;
  /** Fingerprint of everything else that shapes the list (filters, q, owner): a cursor is valid only with the same. */
  binding: string;
}

export interface PageQuery {
  limit: number;
  includeTotal: boolean;
  /** The sort in force, normalised (`-createdAt`); from the cursor when only the cursor names it. */
  sort?: { field: string; desc: boolean; key: string };
  /** The explicit `sort` parameter was given. */
  sortGiven: boolean;
  /** The boundary of the previous page: its last row's sort value and id. */
  after?: { value: unknown; id: string };
}

export function invalidParam(name: string | null, allowed: unknown, detail?: string): ProblemError {
  return new ProblemError('invalid_query_param', detail ?? `Query parameter '${name}' has a value outside the allowed set`, { name, allowed });
}

/** One value per name, refusing repeats and NUL. */
export function singleParams(params: URLSearchParams): Map<string, string> {
  const out = new Map<string, string>();
  for (const [k, v] of params) {
    if (k.includes('\u0000') || v.includes('\u0000')) throw invalidParam(k, 'text without NUL characters', 'Query parameters may not contain NUL characters');
    if (out.has(k)) throw invalidParam(k, 'a single value', `Query parameter '${k}' is given more than once`);
    out.set(k, v);
  }
  return out;
}

/** Refuse a parameter no list accepts: other APIs' paging names get `pagination_param_unknown`. */
export function unknownParam(name: string, allowed: readonly string[], where: string): ProblemError {
  if (FOREIGN_PAGINATION.has(name)) {
    return new ProblemError('pagination_param_unknown', `'${name}' is not a pagination parameter; use cursor, limit and sort`, {
      name, allowed: ['cursor', 'limit', 'sort'],
    });
  }
  return invalidParam(name, allowed, `Unknown query parameter '${name}' for ${where}`);
}

/** `-field`, `field:desc`, `field:asc` or `field` (rule 6: both markers together are invalid). */
export function parseSortParam(raw: string, spec: NonNullable<PageSpec['sorts']>): { field: string; desc: boolean; key: string } {
  let s = raw.trim();
  let desc = false;
  const prefixed = s.startsWith('-');
  const suffix = /:(asc|desc)$/.exec(s);
  if (prefixed && suffix) throw invalidParam('sort', 'field, -field, field:asc or field:desc', "sort may use the '-' prefix or an ':asc'/':desc' suffix, not both");
  if (prefixed) {
    desc = true;
    s = s.slice(1);
  } else if (suffix) {
    desc = suffix[1] === 'desc';
    s = s.slice(0, -suffix[0].length);
  }
  if (!spec.fields.has(s)) {
    throw new ProblemError('sort_field_invalid', `${spec.resource} cannot be sorted by '${s}'`, { field: s, resource: spec.resource, allowed: [...spec.fields] });
  }
  return { field: s, desc, key: `${desc ? '-' : ''}${s}` };
}

/** Read the paging parameters of a list; the caller has consumed (and validated) the rest. */
export function parsePageQuery(params: ReadonlyMap<string, string>, spec: PageSpec, bind: PageBinding): PageQuery {
  const maxLimit = spec.maxLimit ?? MAX_LIMIT;
  let limit = spec.defaultLimit ?? DEFAULT_LIMIT;
  const rawLimit = params.get('limit');
  if (rawLimit !== undefined) {
    if (!/^\d+$/.test(rawLimit) || Number(rawLimit) < 1) throw invalidParam('limit', `1-${maxLimit}`, `limit must be an integer from 1 to ${maxLimit}`);
    limit = Math.min(Number(rawLimit), maxLimit);
  }
  let includeTotal = false;
  const rawTotal = params.get('includeTotal');
  if (rawTotal !== undefined) {
    if (spec.total === false) throw invalidParam('includeTotal', null, `includeTotal is not accepted by ${spec.endpoint}`);
    if (rawTotal !== 'true' && rawTotal !== 'false') throw invalidParam('includeTotal', ['true', 'false']);
    includeTotal = rawTotal === 'true';
  }
  const rawSort = params.get('sort');
  if (rawSort !== undefined && !spec.sorts) throw invalidParam('sort', null, `${spec.endpoint} has a fixed order; sort is not accepted here`);
  const requested = rawSort !== undefined && spec.sorts ? parseSortParam(rawSort, spec.sorts) : undefined;
  let sort = requested;

  let after: PageQuery['after'];
  const rawCursor = params.get('cursor');
  if (rawCursor !== undefined) {
    if (spec.cursor === false) throw invalidParam('cursor', null, `${spec.endpoint} pages without a cursor`);
    const c = decodeCursor(rawCursor, bind.cursorSecret, bind.now);
    if (c.r !== spec.endpoint || c.w !== bind.teamId) throw new ProblemError('cursor_invalid', 'The cursor was issued by another endpoint');
    if (requested && requested.key !== c.s) {
      throw new ProblemError('cursor_sort_mismatch', `The cursor was issued under sort '${c.s}', not '${requested.key}'`, { cursorSort: c.s, sort: requested.key });
    }
    if (c.f !== bind.binding) throw new ProblemError('cursor_invalid', 'The cursor was issued under other filters');
    if (!requested && spec.sorts) sort = parseSortParam(c.s, spec.sorts);
    if (!spec.sorts && c.s !== 'fixed') throw new ProblemError('cursor_invalid', 'The cursor was issued by another endpoint');
    if (typeof c.b[1] !== 'string') throw new ProblemError('cursor_invalid', 'The cursor is not valid here: malformed');
    after = { value: c.b[0], id: c.b[1] };
  }
  if (!sort && spec.sorts) {
    const d = spec.sorts.default;
    sort = { field: d.replace(/^-/, ''), desc: d.startsWith('-'), key: d };
  }
  return { limit, includeTotal, ...(sort ? { sort } : {}), sortGiven: requested !== undefined, ...(after ? { after } : {}) };
}

/** The cursor of the page after one ending at `last` (its sort value and id). */
export function nextCursor(spec: PageSpec, bind: PageBinding, sortKey: string | undefined, value: unknown, id: string): string {
  return encodeCursor({ v: 1, r: spec.endpoint, w: bind.teamId, s: sortKey ?? 'fixed', f: bind.binding, b: [value, id], t: bind.now }, bind.cursorSecret);
}
