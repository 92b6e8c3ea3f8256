import type { Kysely } from 'kysely';
import type { DialectSupport } from '../dialect';

/** Outbox rows read per statement while scrubbing. */
const PAGE = 500;

/**
 * Erase what a person wrote in their presence statuses from the earlier
 * `presenceStatus.*` events of a workspace (the activity feed serves the
 * outbox; undelivered webhooks read it), as `scrubMemberEvents` does for
 * `member.*`: each event whose status is the member's (`payload.presenceStatus.memberId`)
 * gets `text` and `emoji` null. The events are walked by id, a page at a
 * time. Returns how many changed.
 */
export async function scrubPresenceEvents(db: Kysely<any>, d: DialectSupport, teamId: string, memberId: string): Promise<number> {
  let n = 0;
  let after = '';
  for (;;) {
    const rows = await db.selectFrom('outbox').select(['id', 'body'])
      .where('team_id', '=', teamId).where('aggregate_type', '=', 'presenceStatus').where('id', '>', after)
      .orderBy('id').limit(PAGE).execute();
    for (const row of rows) {
      const body = d.decode('json', row.body) as { payload?: { presenceStatus?: Record<string, unknown> } };
      const status = body?.payload?.presenceStatus;
      if (!status || typeof status !== 'object' || status.memberId !== memberId) continue;
      if ((status.text ?? null) === null && (status.emoji ?? null) === null) continue;
      body.payload!.presenceStatus = { ...status, text: null, emoji: null };
      await db.updateTable('outbox').set({ body: d.encode('json', body) }).where('id', '=', row.id).execute();
      n++;
    }
    if (rows.length < PAGE) return n;
    after = rows[rows.length - 1]!.id as string;
  }
}
