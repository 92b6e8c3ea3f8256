import type { Migration } from 'kysely';
import { sql } from 'kysely';

/**
 * Erasing a person scrubs the text and emoji of their earlier presence-status
 * events (sql/queries/presence.ts scrubPresenceEvents). Every status is
 * created by its own member, so the outbox's member_id finds their statuses;
 * this partial index holds member_id for presenceStatus events alone (no cost
 * to any other event's write), so the scrub reads the member's statuses
 * instead of walking every presence event of the workspace; their events are
 * then read by aggregate_id (outbox_aggregate, migration 0024).
 */
export function presenceEventMembers(): Migration {
  return {
    async up(db) {
      await db.schema.createIndex('outbox_presence_member').on('outbox').columns(['member_id'])
        .where(sql.ref('aggregate_type'), '=', sql.lit('presenceStatus')).execute();
    },
  };
}
