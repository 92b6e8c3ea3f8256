import type { Kysely } from 'kysely';
import type { DialectSupport } from '../dialect';

/** A role of the workspace whose name equals `name` in any case (folded like the `contains` filter), other than `exceptId`. */
export async function roleNamedAlike(
  db: Kysely<any>, d: DialectSupport, teamId: string, name: string, exceptId?: string,
): Promise<{ id: string; name: string } | undefined> {
  let q = db.selectFrom('roles').select(['id', 'name']).where('team_id', '=', teamId)
    .where((eb) => eb(d.fold(eb.ref('name')), '=', name.toLowerCase()));
  if (exceptId) q = q.where('id', '!=', exceptId);
  return q.executeTakeFirst();
}
