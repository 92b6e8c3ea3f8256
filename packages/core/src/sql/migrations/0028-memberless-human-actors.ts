import type { Kysely, Migration } from 'kysely';
import type { DialectSupport } from '../dialect';
import { SYSTEM_ACTOR_NAME } from '../queries/actors';

/**
 * Before the engine stamped writes without a calling member (the purge job,
 * the admin API) with the workspace's `systemDefault` actor, such writes
 * created a `human` actor with an empty member id (at most one per
 * workspace: actors_member is unique on (team_id, member_id)). Those rows
 * become what they stood for, in place: type `systemDefault`, display name
 * "System", no member; their ids stay, so every record stamped with them
 * keeps pointing at them. Erased people's actors (human, member id null,
 * tombstoned) are not touched. Writes no events.
 */
export function memberlessHumanActors(d: DialectSupport): Migration {
  return {
    async up(db) {
      await retypeMemberlessHumanActors(db, d, Date.now());
    },
  };
}

/** Turn every `human` actor with an empty member id into a `systemDefault` actor named "System"; returns how many. */
export async function retypeMemberlessHumanActors(db: Kysely<any>, d: DialectSupport, now: number): Promise<number> {
  const rows = await db.updateTable('actors')
    .set({ type: 'systemDefault', display_name: SYSTEM_ACTOR_NAME, member_id: null, updated_at: d.encode('timestamp', now) })
    .where('type', '=', 'human').where('member_id', '=', '')
    .executeTakeFirst();
  return Number(rows.numUpdatedRows);
}
