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

/** The id of the workspace's role with exactly this name, row-locked where the dialect has row locks (a concurrent delete waits). */
export async function roleIdByName(trx: Kysely<any>, d: DialectSupport, teamId: string, name: string): Promise<string | undefined> {
  let q = trx.selectFrom('roles').select('id').where('team_id', '=', teamId).where('name', '=', name);
  if (d.capabilities.forUpdate) q = q.forUpdate();
  const r = await q.executeTakeFirst();
  return r?.id as string | undefined;
}
