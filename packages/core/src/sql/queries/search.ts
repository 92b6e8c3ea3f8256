import { sql, type Expression, type ExpressionBuilder, type SqlBool } from 'kysely';
import { escapeLike, type Repo } from '../repo';
import { limitOf } from '../dialect';
import type { StoredResource } from '../shape';
import type { Condition } from '../plan';

/**
 * A ranked text search over one column of a resource (routes/search.ts):
 * rows of the workspace (live ones where the resource soft-deletes) that meet
 * `conditions` and whose folded `column` contains `needle` (already lower-case).
 */
export interface TextSearch {
  resource: StoredResource;
  teamId: string;
  column: string;
  needle: string;
  conditions: readonly Condition[];
}

/** The rank of a match: 0 exact, 1 prefix, 2 substring (case folded like the `contains` filter). */
function rank(repo: Repo, s: TextSearch, eb: ExpressionBuilder<any, any>) {
  return sql<number>`(case when ${folded(repo, s, eb)} = ${s.needle} then 0 when ${folded(repo, s, eb)} like ${`${escapeLike(s.needle)}%`} escape '\\' then 1 else 2 end)`;
}

function folded(repo: Repo, s: TextSearch, eb: ExpressionBuilder<any, any>) {
  return repo.dialect.fold(eb.ref(s.column));
}

/** The rows the search spans: the workspace's (live) rows meeting the conditions whose folded column contains the needle. */
function matching(repo: Repo, s: TextSearch, eb: ExpressionBuilder<any, any>): Expression<SqlBool> {
  const parts: Expression<SqlBool>[] = [eb('team_id', '=', s.teamId)];
  if (s.resource.softDelete) parts.push(eb('purge_at', 'is', null));
  for (const c of s.conditions) parts.push(repo.condition(eb, c));
  parts.push(sql<SqlBool>`${folded(repo, s, eb)} like ${`%${escapeLike(s.needle)}%`} escape '\\'`);
  return eb.and(parts);
}

/**
 * One keyset page of matches, best rank first, then by the column, then id:
 * raw rows with their rank as `pm_search_rank`, at most `take`, strictly after
 * the boundary `after` = [rank, id] when given. The boundary's column value
 * is read in SQL from its row (a cursor never carries it: a long value would
 * make the next page's URL too long); when that row is gone, the rest of its
 * rank continues by id.
 */
export async function searchPage(
  repo: Repo, s: TextSearch, after: readonly [number, string] | undefined, take: number,
): Promise<Record<string, unknown>[]> {
  let sel = repo.db.selectFrom(s.resource.table).selectAll().select((eb) => rank(repo, s, eb).as('pm_search_rank')).where((eb) => matching(repo, s, eb));
  if (after) {
    const [r, id] = after;
    const boundary = sql`(select b.${sql.ref(s.column)} from ${sql.table(s.resource.table)} as b where b.team_id = ${s.teamId} and b.id = ${id})`;
    sel = sel.where((eb) => sql<SqlBool>`(${rank(repo, s, eb)} > ${r} or (${rank(repo, s, eb)} = ${r} and (case when ${boundary} is null then ${eb.ref('id')} > ${id} else (${eb.ref(s.column)}, ${eb.ref('id')}) > (${boundary}, ${id}) end)))`);
  }
  return sel.orderBy((eb) => rank(repo, s, eb)).orderBy(s.column).orderBy('id').limit(limitOf(repo.dialect, take)).execute();
}

/** How many rows match the search (the page's `total`). */
export async function countSearchMatches(repo: Repo, s: TextSearch): Promise<number> {
  const row = await repo.db.selectFrom(s.resource.table).select((eb) => eb.fn.countAll().as('n')).where((eb) => matching(repo, s, eb)).executeTakeFirstOrThrow();
  return Number(row.n);
}
