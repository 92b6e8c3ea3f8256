import { sql, type Kysely } from 'kysely';
import type { DialectSupport } from '../dialect';

/** Status ids (and so outbox rows' aggregate ids) per statement while scrubbing. */
const PAGE = 500;

/** The aggregate type, as a literal: the partial index outbox_presence_member (migration 0027) serves only statements naming it. */
const PRESENCE = sql.lit('presenceStatus');

/**
 * Erase what a person wrote in their presence statuses from the earlier
 * `presenceStatus.*` events of a workspace (the activity feed serves the
 * outbox; undelivered webhooks read it), as `scrubMemberEvents` does for
 * `member.*`: each event whose status is the member's (`payload.presenceStatus.memberId`)
 * gets `text` and `emoji` null. Narrowed by member, never a walk of the
 * workspace's presence events: a status is created by its own member only,
 * so the statuses they ever had are the aggregates of the presence events
 * they wrote (index outbox_presence_member); those statuses' events, written
 * by anyone (a manager clearing one, the system), are read by aggregate_id
 * (index outbox_aggregate). Returns how many changed.
 */
export async function scrubPresenceEvents(db: Kysely<any>, d: DialectSupport, teamId: string, memberId: string): Promise<number> {
  const statusIds = (await db.selectFrom('outbox').select('aggregate_id').distinct()
    .where('member_id', '=', memberId).where('aggregate_type', '=', PRESENCE).where('team_id', '=', teamId)
    .execute()).map((r) => r.aggregate_id as string);
  let n = 0;
  for (let i = 0; i < statusIds.length; i += PAGE) {
    const rows = await db.selectFrom('outbox').select(['id', 'body'])
      .where('aggregate_id', 'in', statusIds.slice(i, i + PAGE)).where('aggregate_type', '=', PRESENCE).where('team_id', '=', teamId)
      .execute();
    for (const row of rows) {
      const body = d.decode('json', row.body) as { payload?: { presenceStatus?: Record<string, unknown> } };
      const status = body?.payload?.presenceStatus;
      if (!status || typeof status !== 'object' || status.memberId !== memberId) continue;
      if ((status.text ?? null) === null && (status.emoji ?? null) === null) continue;
      body.payload!.presenceStatus = { ...status, text: null, emoji: null };
      await db.updateTable('outbox').set({ body: d.encode('json', body) }).where('id', '=', row.id).execute();
      n++;
    }
  }
  return n;
}
