import { sql, type Expression, type ExpressionBuilder, type SqlBool } from 'kysely';
import { escapeLike, type Repo } from '../repo';

/** Project keys (niceIds) of the workspace that start with `base`, trashed projects included (a key is never reused). */
export async function niceIdsStartingWith(repo: Repo, teamId: string, base: string): Promise<Set<string>> {
  const rows = await repo.db.selectFrom('projects').select('nice_id').where('team_id', '=', teamId)
    .where(sql<SqlBool>`nice_id like ${`${escapeLike(base)}%`} escape '\\'`).execute();
  return new Set(rows.map((r) => r.nice_id as string));
}

/**
 * The SQL form of project access for `projects` rows (services/access.ts
 * `canOpen`): owned by `memberId`, of one of the `openTypes` access types
 * (empty for guests), or with `memberId` among the project's members.
 */
function openTo(eb: ExpressionBuilder<any, any>, memberId: string, openTypes: readonly string[]): Expression<SqlBool> {
  return eb.or([
    eb('owner_id', '=', memberId),
    ...(openTypes.length ? [eb('access_type', 'in', openTypes as string[])] : []),
    eb.exists(eb.selectFrom('links').select('links.related_id')
      .where('links.kind', '=', 'project.members').whereRef('links.parent_id', '=', 'projects.id').where('links.related_id', '=', memberId)),
  ]);
}

/** Of these project ids (at most 500: one statement), those of the workspace that `memberId` may open, trashed ones included. */
export async function openProjectIdsAmong(
  repo: Repo, teamId: string, ids: readonly string[], memberId: string, openTypes: readonly string[],
): Promise<string[]> {
  const rows = await repo.db.selectFrom('projects').select('id')
    .where('team_id', '=', teamId).where('id', 'in', ids as string[])
    .where((eb) => openTo(eb, memberId, openTypes))
    .execute();
  return rows.map((r) => r.id as string);
}

/** How many live (not trashed) projects the workspace has. */
export async function countLiveProjects(repo: Repo, teamId: string): Promise<number> {
  const row = await repo.db.selectFrom('projects').select((eb) => eb.fn.countAll().as('n'))
    .where('team_id', '=', teamId).where('purge_at', 'is', null).executeTakeFirstOrThrow();
  return Number(row.n);
}

/** Ids of the live projects of the workspace that `memberId` may open, at most `limit` of them (order not kept). */
export async function openLiveProjectIds(
  repo: Repo, teamId: string, memberId: string, openTypes: readonly string[], limit: number,
): Promise<string[]> {
  const rows = await repo.db.selectFrom('projects').select('id')
    .where('team_id', '=', teamId).where('purge_at', 'is', null)
    .where((eb) => openTo(eb, memberId, openTypes))
    .limit(limit).execute();
  return rows.map((r) => r.id as string);
}
