import type { Kysely, Migration } from 'kysely';
import type { DialectSupport } from '../dialect';

/** The resource and owner field whose events the feed now judges at read time (resources/time-entry.resource.ts `ownerRead`). */
const OWNER_READ = { type: 'timeEntry', field: 'memberId' } as const;
const BATCH = 500;

/**
 * The activity feed keeps its audiences current (docs/not-shown.md "Activity
 * feed"): an index on the outbox's aggregate_id, for rewriting the audience
 * of one record's past events in one statement when it turns private or
 * shared; and time-entry events store their owner alone as their audience
 * (the feed judges viewTimeReports when it reads), so earlier events, which
 * named everyone who held viewTimeReports then, are rewritten to their
 * entry's member (read from the event's payload). Writes no events.
 */
export function activityAudience(d: DialectSupport): Migration {
  return {
    async up(db) {
      await db.schema.createIndex('outbox_aggregate').on('outbox').columns(['aggregate_id']).execute();
      await narrowOwnerReadAudiences(db, d);
    },
  };
}

/** Store each time-entry event's audience as its entry's member alone (from the event's payload; `,` when it names none). */
export async function narrowOwnerReadAudiences(db: Kysely<any>, d: DialectSupport): Promise<void> {
  // One scan for the ids (no index serves aggregate_type), then the bodies by primary key, a batch at a time.
  const ids = (await db.selectFrom('outbox').select('id').where('aggregate_type', '=', OWNER_READ.type).execute()).map((r) => r.id as string);
  for (let i = 0; i < ids.length; i += BATCH) {
    const rows = await db.selectFrom('outbox').select(['id', 'body']).where('id', 'in', ids.slice(i, i + BATCH)).execute();
    const byAudience = new Map<string, string[]>();
    for (const r of rows) {
      const body = d.decode('json', r.body) as { payload?: Record<string, Record<string, unknown> | undefined> } | null;
      const owner = body?.payload?.[OWNER_READ.type]?.[OWNER_READ.field];
      const audience = typeof owner === 'string' ? `,${owner},` : ',';
      byAudience.set(audience, [...(byAudience.get(audience) ?? []), r.id as string]);
    }
    for (const [audience, same] of byAudience) await db.updateTable('outbox').set({ audience }).where('id', 'in', same).execute();
  }
}
