import type { Kysely } from 'kysely';
import type { DialectSupport } from '../sql/dialect';
import { insertWebhookJobs, liveWebhooks, type LiveWebhook } from '../sql/queries/webhooks';
import { matchesAny } from './patterns';

export type { LiveWebhook } from '../sql/queries/webhooks';

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
  /** `audience`: the members who may see the record; only webhooks they registered receive it (absent: every webhook). */
  events: ReadonlyArray<{ id: string; type: string; audience?: readonly string[] | undefined }>,
  now: number,
  /** Already read with the outbox insert (one round trip), else read here. */
  preloaded?: LiveWebhook[],
  /** Hold the job inserts to leave with the transaction's next statement (insertWebhookJobs). */
  opts: { behind?: boolean } = {},
): Promise<number> {
  const due = events.filter((e) => !e.id.startsWith('test-'));
  if (due.length === 0 || !teamId) return 0;
  const hooks = preloaded ?? (await liveWebhooks(trx, d, teamId));
  if (hooks.length === 0) return 0;
  const ts = d.encode('timestamp', now);
  const rows: Record<string, unknown>[] = [];
  // Each audience as a set, once per event (not searched once per webhook).
  const audiences = due.map((e) => (e.audience ? new Set(e.audience) : undefined));
  for (const hook of hooks) {
    const patterns = (d.decode('json', hook.events) as string[] | null) ?? [];
    if (patterns.length === 0) continue;
    for (const [i, e] of due.entries()) {
      if (!matchesAny(patterns, e.type)) continue;
      const audience = audiences[i];
      if (audience && !(typeof hook.created_by_id === 'string' && audience.has(hook.created_by_id))) continue;
      rows.push({
        id: `${hook.id}:${e.id}`, team_id: teamId, webhook_id: hook.id, event_id: e.id, event_type: e.type, attempts: 0,
        status: 'pending', next_attempt_at: ts, lease_until: null, lease_token: null, created_at: ts, updated_at: ts,
      });
    }
  }
  await insertWebhookJobs(trx, rows, opts);
  return rows.length;
}
