import { sql, type SqlBool } from 'kysely';
import { escapeLike, type Repo } from '../repo';

/** Project keys (niceIds) of the workspace that start with `base`, trashed projects included (a key is never reused). */
export async function niceIdsStartingWith(repo: Repo, teamId: string, base: string): Promise<Set<string>> {
  const rows = await repo.db.selectFrom('projects').select('nice_id').where('team_id', '=', teamId)
    .where(sql<SqlBool>`nice_id like ${`${escapeLike(base)}%`} escape '\\'`).execute();
  return new Set(rows.map((r) => r.nice_id as string));
}
