import type { Kysely } from 'kysely';

/** One logged delivery attempt of a webhook, as stored (`created_at` in the dialect's timestamp encoding). */
export interface DeliveryRow {
  id: string;
  webhook_id: string;
  event_type: string;
  status: string;
  response_status: unknown;
  duration_ms: unknown;
  error: string | null;
  created_at: unknown;
}

/** The newest `take` delivery log rows of one webhook of the workspace, newest first (ties by id, descending). */
export async function recentDeliveries(db: Kysely<any>, teamId: string, webhookId: string, take: number): Promise<DeliveryRow[]> {
  return db.selectFrom('webhook_deliveries')
    .select(['id', 'webhook_id', 'event_type', 'status', 'response_status', 'duration_ms', 'error', 'created_at'])
    .where('team_id', '=', teamId).where('webhook_id', '=', webhookId)
    .orderBy('created_at', 'desc').orderBy('id', 'desc').limit(take).execute();
}
