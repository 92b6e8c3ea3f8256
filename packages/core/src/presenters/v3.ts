/** What an operation answers on the v3 surface: status, body and extra headers. */
export interface OpResult {
  status: number;
  body?: unknown;
  headers?: Record<string, string>;
  /** What an Idempotency-Key replay answers instead, when the response holds a secret that must not be stored (a new token). */
  replay?: Omit<OpResult, 'replay'>;
}

/** A page of a list as the operations produce it, before any surface shapes it. */
export interface Page<T = unknown> {
  data: T[];
  limit: number;
  hasMore: boolean;
  /** Absent: the list pages without a cursor (the delivery log). */
  nextCursor?: string | null;
  /** Present only when the caller asked (`includeTotal=true`). */
  total?: number;
}

/**
 * The v3 list envelope (spec "Standard operations" rule 5): `{data, total?,
 * limit, hasMore, nextCursor}`, in that order, 200. The one place it is built:
 * resource lists, search, personal access tokens and the delivery log. The
 * legacy v1.0 surface will have its own presenter over the same pages.
 */
export function v3Page(p: Page): OpResult {
  const body: Record<string, unknown> = { data: p.data };
  if (p.total !== undefined) body.total = p.total;
  body.limit = p.limit;
  body.hasMore = p.hasMore;
  if (p.nextCursor !== undefined) body.nextCursor = p.nextCursor;
  return { status: 200, body };
}

/** Split one extra row off a fetched page: the rows to show and whether more exist. */
export function takePage<T>(rows: T[], limit: number): { rows: T[]; hasMore: boolean } {
  const hasMore = rows.length > limit;
  return { rows: hasMore ? rows.slice(0, limit) : rows, hasMore };
}
