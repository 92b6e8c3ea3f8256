import type { Kysely } from 'kysely';
import type { DialectSupport } from '../dialect';

/**
 * The id of a member's human actor in a workspace, creating the actor row
 * first when it has none (`id` is used only then). Insert-or-ignore on
 * (team_id, member_id), then read back: concurrent writers end with one actor.
 */
export async function ensureMemberActor(
  trx: Kysely<any>, d: DialectSupport, table: string,
  a: { id: string; teamId: string; memberId: string; displayName: string; now: number },
): Promise<string> {
  const ts = d.encode('timestamp', a.now);
  await trx.insertInto(table).values({
    id: a.id, team_id: a.teamId, type: 'human', display_name: a.displayName,
    member_id: a.memberId, created_at: ts, updated_at: ts,
  }).onConflict((oc) => oc.columns(['team_id', 'member_id']).doNothing()).execute();
  const row = await trx.selectFrom(table).select('id')
    .where('team_id', '=', a.teamId).where('member_id', '=', a.memberId).executeTakeFirstOrThrow();
  return row.id as string;
}

/**
 * The id of a workspace's service actor of `type` (the reminders job's
 * `cron` actor), creating it first when missing. Its id is derived from the
 * workspace and the name (`id`), so concurrent runs insert one row.
 */
export async function ensureServiceActor(
  trx: Kysely<any>, d: DialectSupport, table: string,
  a: { id: string; teamId: string; type: string; displayName: string; now: number },
): Promise<string> {
  const ts = d.encode('timestamp', a.now);
  await trx.insertInto(table).values({
    id: a.id, team_id: a.teamId, type: a.type, display_name: a.displayName, member_id: null, created_at: ts, updated_at: ts,
  }).onConflict((oc) => oc.column('id').doNothing()).execute();
  return a.id;
}
