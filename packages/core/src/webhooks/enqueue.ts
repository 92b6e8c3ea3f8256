import type { Kysely, QueryCreator } from 'kysely';
import type { DialectSupport } from '../sql/dialect';
import { matchesAny } from './patterns';

/** Job rows per insert statement (12 parameters each). */
const CHUNK = 80;

/** A webhook row as the queue needs it. */
export interface LiveWebhook {
  id: string;
  events: unknown;
}

/** The team's active, live webhooks (`qc` may carry a CTE: the outbox insert on Postgres). */
export function selectLiveWebhooks(qc: QueryCreator<any>, d: DialectSupport, teamId: string) {
  return qc.selectFrom('webhooks').select(['id', 'events'])
    .where('team_id', '=', teamId).where('active', '=', d.encode('boolean', true) as any).where('purge_at', 'is', null);
}

/** The parameters `selectLiveWebhooks` binds, in order. */
export function liveWebhooksParams(d: DialectSupport, teamId: string): unknown[] {
  return [teamId, d.encode('boolean', true)];
}

/**
 * Queue one delivery job per (matching webhook, event) in the transaction
 * that records the events (called from Engine.flushEvents): the team's
 * active, live webhooks are read once; the job key `{webhookId}:{eventId}`
 * makes publishing twice a no-op. Webhooks that are inactive at this moment
 * never get the event (spec rule 5: events during inactivity are lost).
 * Test deliveries (event ids `test-…`) never enter the queue.
 */
export async function enqueueWebhookJobs(
  trx: Kysely<any>,
  d: DialectSupport,
  teamId: string,
  events: ReadonlyArray<{ id: string; type: string }>,
  now: number,
  /** Already read with the outbox insert (one round trip), else read here. */
  preloaded?: LiveWebhook[],
): Promise<number> {
  const due = events.filter((e) => !e.id.startsWith('test-'));
  if (due.length === 0 || !teamId) return 0;
  const hooks = preloaded ?? (await selectLiveWebhooks(trx, d, teamId).execute());
  if (hooks.length === 0) return 0;
  const ts = d.encode('timestamp', now);
  const rows: Record<string, unknown>[] = [];
  for (const hook of hooks) {
    const patterns = (d.decode('json', hook.events) as string[] | null) ?? [];
    if (patterns.length === 0) continue;
    for (const e of due) {
      if (!matchesAny(patterns, e.type)) continue;
      rows.push({
        id: `${hook.id}:${e.id}`, team_id: teamId, webhook_id: hook.id, event_id: e.id, event_type: e.type, attempts: 0,
        status: 'pending', next_attempt_at: ts, lease_until: null, lease_token: null, created_at: ts, updated_at: ts,
      });
    }
  }
  for (let i = 0; i < rows.length; i += CHUNK) {
    await trx.insertInto('webhook_jobs').values(rows.slice(i, i + CHUNK)).onConflict((oc) => oc.column('id').doNothing()).execute();
  }
  return rows.length;
}
