import type { Resource } from '../resources/define-resource';
import type { StorageKind } from '../sql/shape';
import type { BodyPart } from '../http/types';

/** What an operation answers on the v3 surface: status, body and extra headers. */
export interface OpResult {
  status: number;
  body?: unknown;
  /** The body already serialised, whole or in pieces (a page whose JSON the database built); wins over `body`. */
  text?: string | readonly BodyPart[];
  headers?: Record<string, string>;
  /** What an Idempotency-Key replay answers instead, when the response holds a secret that must not be stored (a new token). */
  replay?: Omit<OpResult, 'replay'>;
}

/** A page of a list as the operations produce it, before any surface shapes it. */
export interface Page<T = unknown> {
  data: T[];
  /** The `data` array as JSON text in pieces (concatenated, they are the array), when the database built it (the read fast path); `data` is then empty. */
  json?: readonly BodyPart[];
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
  if (p.json !== undefined) {
    // The same bytes JSON.stringify prints for the object below, around the prebuilt array: one string for a
    // page of one piece (most pages), else the array's pieces with the envelope joined to the first and last.
    let tail = '';
    if (p.total !== undefined) tail += `,"total":${p.total}`;
    tail += `,"limit":${p.limit},"hasMore":${p.hasMore}`;
    if (p.nextCursor !== undefined) tail += `,"nextCursor":${JSON.stringify(p.nextCursor)}`;
    const parts = p.json;
    const last = parts.length - 1;
    const first = parts[0]!;
    const end = parts[last]!;
    if (last === 0 && typeof first === 'string') return { status: 200, text: `{"data":${first}${tail}}` };
    // Pieces of text take the envelope in; pieces of bytes are left whole, the envelope beside them.
    const head = typeof first === 'string' ? [`{"data":${first}`] : ['{"data":', first];
    if (last === 0) return { status: 200, text: [...head, `${tail}}`] };
    return { status: 200, text: [...head, ...parts.slice(1, last), ...(typeof end === 'string' ? [`${end}${tail}}`] : [end, `${tail}}`])] };
  }
  const body: Record<string, unknown> = { data: p.data };
  if (p.total !== undefined) body.total = p.total;
  body.limit = p.limit;
  body.hasMore = p.hasMore;
  if (p.nextCursor !== undefined) body.nextCursor = p.nextCursor;
  return { status: 200, body };
}

/**
 * What a standard operation produced, before any surface shapes it: a page,
 * one record (new or not), or nothing. The v3 presenter below turns it into
 * status codes and bodies; the v1.0 surface will have its own.
 */
export type Outcome =
  | { kind: 'page'; page: Page }
  | {
    kind: 'record';
    record: Record<string, unknown>;
    /** The record as JSON text, when the database built it (the read fast path); `record` is then empty. */
    json?: string;
    /** The operation created the record. */
    created?: boolean;
    /** Fields this answer alone carries (a once-only secret): never in a replay, so never stored. */
    revealed?: Record<string, unknown>;
  }
  | { kind: 'done' };

/** The v3 answer of an outcome: 200 with the envelope or the record, 201 for a created one, 204 without a body. */
export function v3(outcome: Outcome): OpResult {
  switch (outcome.kind) {
    case 'page':
      return v3Page(outcome.page);
    case 'record': {
      const status = outcome.created ? 201 : 200;
      if (outcome.json !== undefined) return { status, text: outcome.json };
      if (!outcome.revealed) return { status, body: outcome.record };
      return { status, body: { ...outcome.record, ...outcome.revealed }, replay: { status, body: outcome.record } };
    }
    case 'done':
      return { status: 204 };
  }
}

/** Split one extra row off a fetched page: the rows to show and whether more exist. */
export function takePage<T>(rows: T[], limit: number): { rows: T[]; hasMore: boolean } {
  const hasMore = rows.length > limit;
  return { rows: hasMore ? rows.slice(0, limit) : rows, hasMore };
}

/**
 * How v3 shows one field of a record: its response name, where the value
 * lives (a column of the row, or the id set of a many-to-many relation) and
 * how it is encoded (`instant`: ms → ISO 8601 UTC with milliseconds; `value`:
 * as stored, JSON values parsed). Data, not code, so that a page's JSON can
 * also be built inside the database from the same description.
 */
export type OutputField =
  | { name: string; source: 'column'; column: string; kind: StorageKind; encoding: 'value' | 'instant' }
  | { name: string; source: 'relation'; relation: string; encoding: 'ids' };

const shapes = new WeakMap<Resource, readonly OutputField[]>();

/** The v3 response shape of a resource: every response field but computed ones (hooks' `present`), in declaration order. */
export function v3Shape(res: Resource): readonly OutputField[] {
  let shape = shapes.get(res);
  if (!shape) {
    const out: OutputField[] = [];
    for (const c of res.columns) {
      if (c.internal || c.writeOnly) continue;
      out.push({ name: c.key, source: 'column', column: c.column, kind: c.kind, encoding: c.kind === 'timestamp' ? 'instant' : 'value' });
    }
    for (const [field, relation] of Object.entries(res.relationFields)) out.push({ name: field, source: 'relation', relation, encoding: 'ids' });
    shape = out;
    shapes.set(res, shape);
  }
  return shape;
}
